#!/usr/bin/env bash
# The scheduler engine's speed: simulated requests per CPU-second (and per wall-second)
# from engine/model/engine_bench, median of 3, with a reference workload (openssl sha256)
# before and after so a slow machine is told from a slow engine (median of 5 with ranges,
# interleaved with the baseline's own engine_bench when BASELINE sits in a build tree that
# has one: BASELINE/../engine/model/engine_bench); then every seed example
# through `blkbench sim`, CPU-seconds each, and with BASELINE (another build's blkbench)
# the same files interleaved with it and the ratio. Writes Markdown to stdout (or to
# --out FILE), never into the tree. The baseline reads the machine profiles of its own
# source tree (BLKBENCH/../../engine/profiles, as a binary in its build tree does), or
# --baseline-profiles DIR for a binary copied elsewhere: the profile format may differ.
# Usage: bench/engine_bench.sh [--out FILE] [--baseline BLKBENCH [--baseline-profiles DIR]]
#                              [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
out=/dev/stdout baseline="" baseline_profiles="" build=build
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out="$2"; shift 2 ;;
    --baseline) baseline="$2"; shift 2 ;;
    --baseline-profiles) baseline_profiles="$2"; shift 2 ;;
    -h|--help) sed -n 2,14p "$0"; exit 0 ;;
    *) build="$1"; shift ;;
  esac
done
[ -x "$build/engine/model/engine_bench" ] || { echo "build $build first (scripts/build.sh release)" >&2; exit 2; }
current="$build/cli/blkbench"
current_profiles="$PWD/engine/profiles"
if [ -n "$baseline" ] && [ -z "$baseline_profiles" ]; then
  baseline_profiles="$(cd "$(dirname "$baseline")/../.." && pwd)/engine/profiles"
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

reference() {  # MB/s of openssl's sha256 over 16 KiB blocks for 1 s, one core
  openssl speed -seconds 1 -bytes 16384 sha256 2>/dev/null | awk '/^sha256/ {sub("k","",$2); printf "%.0f", $2/1000}'
}
ref_before=$(reference)
# The baseline's own engine_bench, when its build tree has one, runs interleaved with this
# build's (5 runs each): the engine rows then compare too, not only the seed examples.
baseline_bench=""
if [ -n "$baseline" ] && [ -x "$(dirname "$baseline")/../engine/model/engine_bench" ]; then
  baseline_bench="$(dirname "$baseline")/../engine/model/engine_bench"
fi
runs=3; [ -z "$baseline_bench" ] || runs=5
for i in $(seq "$runs"); do
  "$build/engine/model/engine_bench" >> "$tmp/engine"
  [ -z "$baseline_bench" ] || BLKBENCH_ENGINE_PROFILES_DIR="$baseline_profiles" \
    "$baseline_bench" >> "$tmp/engine.baseline"
done
touch "$tmp/engine.baseline"
# CPU-seconds of one `blkbench sim FILE` run (user+sys of the process).
# $3: the machine profiles that binary reads.
# "fail" when the run fails (a baseline that cannot read a newer profile file a seed
# example names by path): that row is left out of the comparison.
cpu_of() {
  if BLKBENCH_ENGINE_PROFILES_DIR="$3" /usr/bin/time -f "%U %S" -o "$tmp/t" "$1" sim "$2" \
    --format json > /dev/null 2>&1; then
    tail -1 "$tmp/t" | awk '{printf "%.2f", $1+$2}'
  else
    echo fail
  fi
}
seeds=(examples/seeds/0*.yaml examples/seeds/threads/*.yaml)
for f in "${seeds[@]}"; do
  echo "$f current $(cpu_of "$current" "$f" "$current_profiles")" >> "$tmp/seeds"
  [ -z "$baseline" ] || echo "$f baseline $(cpu_of "$baseline" "$f" "$baseline_profiles")" >> "$tmp/seeds"
done
ref_after=$(reference)

python3 - "$tmp/engine" "$tmp/seeds" "$ref_before" "$ref_after" "$baseline" "$tmp/engine.baseline" > "$out" <<'PY'
import collections, datetime, os, statistics, sys
engine, seeds, ref_before, ref_after, baseline, engine_baseline = sys.argv[1:7]
def read_engine(path):
    cpu, wall, iops = collections.defaultdict(list), collections.defaultdict(list), {}
    for line in open(path):
        f = line.split()
        if "req/cpu-s" not in f:
            continue
        name = " ".join(f[:3])
        cpu[name].append(float(f[f.index("req/cpu-s") - 1]))
        wall[name].append(float(f[f.index("req/wall-s") - 1]))
        iops[name] = f[f.index("IOPS") - 2]
    return cpu, wall, iops
cpu, wall, iops = read_engine(engine)
base_cpu, _, base_iops = read_engine(engine_baseline)
runs = len(next(iter(cpu.values()), []))
print("Simulated requests per CPU-second and per wall-second, median of %d runs of" % runs)
print("`engine/model/engine_bench` (one core; null_blk QD32 x 16 jobs, elevators on seed 000's")
print("128-CPU machine). Reference: openssl sha256, 16 KiB blocks, one core: %s MB/s before the" % ref_before)
print("runs, %s MB/s after (a slow day shows there, not only here)." % ref_after)
if base_cpu:
    print("The baseline build's engine_bench ran interleaved with this one's; its simulated IOPS")
    print("are the same where the model is (a differing one is marked).")
print()
if base_cpu:
    print("| workload | simulated IOPS | baseline req/CPU-s (min–max) | this build req/CPU-s (min–max) | ratio | per wall-second |")
    print("|---|---:|---:|---:|---:|---:|")
else:
    print("| workload | simulated IOPS | requests per CPU-second | per wall-second |")
    print("|---|---:|---:|---:|")
def span(v):
    return "%.2fM (%.2f–%.2f)" % (statistics.median(v) / 1e6, min(v) / 1e6, max(v) / 1e6)
for name in sorted(cpu):
    if base_cpu and name in base_cpu:
        same = "" if base_iops.get(name) == iops[name] else " (baseline %s)" % base_iops.get(name)
        print("| %s | %s%s | %s | %s | **%.2f** | %.2fM |" % (
            name, iops[name], same, span(base_cpu[name]), span(cpu[name]),
            statistics.median(cpu[name]) / statistics.median(base_cpu[name]),
            statistics.median(wall[name]) / 1e6))
    else:
        print("| %s | %s | %.2fM | %.2fM |" % (name, iops[name], statistics.median(cpu[name]) / 1e6,
                                            statistics.median(wall[name]) / 1e6))
rows = collections.defaultdict(dict)
failed = set()
for line in open(seeds):
    f, who, s = line.split()
    if s == "fail":
        failed.add((f, who))
    else:
        rows[f][who] = float(s)
for f, who in sorted(failed):
    rows.pop(f, None)
print()
print("Every seed example through `blkbench sim` (whole process: parse, simulate, print),")
print("CPU-seconds%s:" % (", interleaved with the baseline build" if baseline else ""))
print()
if baseline:
    print("| example | baseline CPU-s | this build CPU-s | ratio |")
    print("|---|---:|---:|---:|")
else:
    print("| example | CPU-s |")
    print("|---|---:|")
tot = collections.Counter()
for f, r in rows.items():
    tot.update(r)
    if baseline:
        print("| %s | %.2f | %.2f | %.2f |" % (f, r["baseline"], r["current"], r["current"] / max(r["baseline"], 1e-9)))
    else:
        print("| %s | %.2f |" % (f, r["current"]))
if baseline:
    print("| **all** | %.2f | %.2f | **%.2f** |" % (tot["baseline"], tot["current"], tot["current"] / tot["baseline"]))
else:
    print("| **all** | %.2f |" % tot["current"])
for f, who in sorted(failed):
    print("| %s | %s build failed: left out |%s" % (f, who, " | |" if baseline else ""))
print()
print("Run on %s, %d CPUs, shared machine." % (datetime.date.today().isoformat(), os.cpu_count()))
PY
