#!/usr/bin/env bash
# The engine against a real kernel change, side by side in one run: the same matrix on
# the engine's sim:6.1 and sim:6.12 profiles (blkbench sim) and on Debian's newest 6.1 and
# 6.12 kernels in qemu guests (blkbench run --vm null_blk), and per cell the change from
# 6.1 to 6.12 the engine predicts beside the change measured.
#
# The matrix is seed 004's setting on a null_blk with a 5 ms timer completion (so the
# device's service time, not the guest's CPU, sets the rate even under TCG): four
# psync readers started 200 ms apart (separate queues to bfq) in one cgroup, under bfq
# (the change: 6.2's "one busy group is not asymmetric", so bfq stops idling on each
# reader's queue) and mq-deadline (a control: nothing in it changed that the engine
# models), and the same four readers left in the root cgroup.
#
# Usage: bench/engine_vs_kernels.sh [BUILD_DIR] [--write FILE]
#   --write FILE replaces the section between the engine_vs_kernels markers of FILE
#   (docs/engine-vs-real.md). Needs root and qemu-system-x86_64.
# env: RUNTIME=3s REPEATS=3 KEEP=DIR (keep the matrices and stores)
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build}"
write=""
[ "${2:-}" = "--write" ] && write="$3"
runtime=${RUNTIME:-3s}
repeats=${REPEATS:-3}
blkbench="$build/cli/blkbench"
dir=$(mktemp -d)
cleanup() {
  if [ -n "${KEEP:-}" ]; then mkdir -p "$KEEP" && cp -r "$dir"/. "$KEEP"/; fi
  rm -rf "$dir"
}
trap cleanup EXIT

matrix() {  # device class, extra matrix line, target extra
  cat <<EOF
name: engine-vs-kernels
repeats: $repeats
job: {rw: randread, bs: 4k, direct: 1, ioengine: psync, thread: 0, runtime: $runtime, time_based: 1}
jobs:
  fio1: {startdelay: 0ms}
  fio2: {startdelay: 200ms}
  fio3: {startdelay: 400ms}
  fio4: {startdelay: 600ms}
matrix:
  scheduler: [bfq, mq-deadline]
  cgroup: [one, root]
$2
target: {device_class: $1$3}
device:
  null_blk: {submit_queues: 2, hw_queue_depth: 64, irqmode: 2, completion_nsec: 5000000}
EOF
}
matrix '"sim:null_blk"' '  kernel: ["sim:6.1", "sim:6.12"]' ', machine: kvm-2vcpu' >"$dir/sim.yaml"
matrix null_blk '' '' >"$dir/real.yaml"

start=$(date +%s)
"$blkbench" sim "$dir/sim.yaml" --db "$dir/sim.db" -q >/dev/null
"$blkbench" run "$dir/real.yaml" --vm null_blk --kernel 'deb:6.1.0-*' \
  --kernel 'deb:linux-image-6.12*' --db "$dir/real.db" --state-dir "$dir/state" \
  >/dev/null 2>"$dir/real.log" || { cat "$dir/real.log" >&2; exit 1; }
took=$(( $(date +%s) - start ))
"$blkbench" results 1 --db "$dir/sim.db" --format csv >"$dir/sim.csv"
"$blkbench" results 1 --db "$dir/real.db" --format csv >"$dir/real.csv"
accel=$(grep -o 'booted in [0-9.]* s; [a-z]*' "$dir/real.log" | head -1 | awk '{print $NF}')

python3 - "$dir/sim.csv" "$dir/real.csv" "${accel:-?}" "$build" "$took" "$write" <<'EOF'
import csv, re, statistics, subprocess, sys, datetime
sim_csv, real_csv, accel, build, took, write = sys.argv[1:7]

def medians(path):
    by = {}
    for r in csv.DictReader(open(path)):
        if r["state"] != "done":
            continue
        by.setdefault((r["cell_without_kernel"], r["axes.kernel"]), []).append(float(r["iops"]))
    return {k: statistics.median(v) for k, v in by.items()}, {k: len(v) for k, v in by.items()}

def version(k):
    return tuple(int(x) for x in re.findall(r"\d+", k.split(":")[-1])[:3])

sim, _ = medians(sim_csv)
real, n = medians(real_csv)
sim_k = sorted({k for _, k in sim}, key=version)
real_k = sorted({k for _, k in real}, key=version)
cells = sorted({c for c, _ in sim})
def pct(a, b):
    return (b / a - 1) * 100 if a > 0 else float("nan")
def fmt(x):
    return f"{x/1000:.1f}k"
rows = [f"| cell | engine {sim_k[0]} | engine {sim_k[1]} | predicted | {real_k[0]} | {real_k[1]} | measured ({accel}) | prediction |",
        "|---|---:|---:|---:|---:|---:|---:|---|"]
for c in cells:
    s0, s1 = sim.get((c, sim_k[0])), sim.get((c, sim_k[1]))
    r0, r1 = real.get((c, real_k[0])), real.get((c, real_k[1]))
    if None in (s0, s1, r0, r1):
        rows.append(f"| {c} | missing runs | | | | | | |")
        continue
    p, m = pct(s0, s1), pct(r0, r1)
    def sign(x):
        return 0 if abs(x) < 10 else (1 if x > 0 else -1)
    # The factors 1 + change within 25 % of each other: right; the same way beyond ±10 %
    # but not that close: right direction, wrong size; else wrong.
    close = max((1 + p / 100) / (1 + m / 100), (1 + m / 100) / (1 + p / 100)) <= 1.25
    agree = ("right" if close and sign(p) == sign(m)
             else "right direction, wrong size" if sign(p) == sign(m) else "wrong")
    rows.append(f"| {c} | {fmt(s0)} | {fmt(s1)} | {p:+.0f}% | {fmt(r0)} | {fmt(r1)} | {m:+.0f}% | {agree} |")
qemu = subprocess.run(["qemu-system-x86_64", "--version"], capture_output=True, text=True).stdout.split()[3]
summary = (f"Measured {datetime.date.today()} with `bench/engine_vs_kernels.sh {build}` "
           f"({took} s; IOPS, median of the repeats; guests: 2 vCPUs, 2 GiB, {accel}, qemu {qemu}; "
           f"the engine's machine profile kvm-2vcpu). \"prediction\": right when the predicted and "
           f"measured factors (1 + change) are within 25 % of each other and on the same side of "
           f"±10 % (TCG run to run noise); right direction when only the side agrees.")
table = "\n".join(rows)
print(table)
print()
print(summary)
if write:
    text = open(write).read()
    begin, end = "<!-- engine_vs_kernels:begin -->", "<!-- engine_vs_kernels:end -->"
    body = f"{begin}\n{table}\n\n{summary}\n{end}"
    if begin in text:
        text = re.sub(re.escape(begin) + ".*?" + re.escape(end), lambda m: body, text, flags=re.S)
    else:
        text += "\n" + body + "\n"
    open(write, "w").write(text)
EOF
