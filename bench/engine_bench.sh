#!/usr/bin/env bash
# The scheduler engine's speed: simulated requests per CPU-second (and per wall-second)
# from engine/model/engine_bench, median of 3, with a reference workload (openssl sha256)
# before and after so a slow machine is told from a slow engine; then every seed example
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
    -h|--help) sed -n 2,12p "$0"; exit 0 ;;
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
for i in 1 2 3; do "$build/engine/model/engine_bench" >> "$tmp/engine"; done
# CPU-seconds of one `blkbench sim FILE` run (user+sys of the process).
# $3: the machine profiles that binary reads.
cpu_of() {
  BLKBENCH_ENGINE_PROFILES_DIR="$3" /usr/bin/time -f "%U %S" -o "$tmp/t" "$1" sim "$2" \
    --format json > /dev/null 2>&1 || true
  awk '{printf "%.2f", $1+$2}' "$tmp/t"
}
seeds=(examples/seeds/0*.yaml examples/seeds/threads/*.yaml)
for f in "${seeds[@]}"; do
  echo "$f current $(cpu_of "$current" "$f" "$current_profiles")" >> "$tmp/seeds"
  [ -z "$baseline" ] || echo "$f baseline $(cpu_of "$baseline" "$f" "$baseline_profiles")" >> "$tmp/seeds"
done
ref_after=$(reference)

python3 - "$tmp/engine" "$tmp/seeds" "$ref_before" "$ref_after" "$baseline" > "$out" <<'PY'
import collections, datetime, os, statistics, sys
engine, seeds, ref_before, ref_after, baseline = sys.argv[1:6]
cpu, wall, iops = collections.defaultdict(list), collections.defaultdict(list), {}
for line in open(engine):
    f = line.split()
    if "req/cpu-s" not in f:
        continue
    name = " ".join(f[:3])
    cpu[name].append(float(f[f.index("req/cpu-s") - 1]))
    wall[name].append(float(f[f.index("req/wall-s") - 1]))
    iops[name] = f[f.index("IOPS") - 2]
print("Simulated requests per CPU-second and per wall-second, median of 3 runs of")
print("`engine/model/engine_bench` (one core; null_blk QD32 x 16 jobs, elevators on seed 000's")
print("128-CPU machine). Reference: openssl sha256, 16 KiB blocks, one core: %s MB/s before the" % ref_before)
print("runs, %s MB/s after (a slow day shows there, not only here)." % ref_after)
print()
print("| workload | simulated IOPS | requests per CPU-second | per wall-second |")
print("|---|---:|---:|---:|")
for name in sorted(cpu):
    print("| %s | %s | %.2fM | %.2fM |" % (name, iops[name], statistics.median(cpu[name]) / 1e6,
                                        statistics.median(wall[name]) / 1e6))
rows = collections.defaultdict(dict)
for line in open(seeds):
    f, who, s = line.split()
    rows[f][who] = float(s)
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
print()
print("Run on %s, %d CPUs, shared machine." % (datetime.date.today().isoformat(), os.cpu_count()))
PY
