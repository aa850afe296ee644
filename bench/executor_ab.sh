#!/usr/bin/env bash
# The executor of two builds side by side: blkbench-exec-bench BEFORE and AFTER, interleaved
# (before, after, before, ...) on one loop device over /dev/shm, randread 4 KiB, per row an
# I/O engine and depth; prints each run's IOPS and CPU µs per I/O, then per row the median
# (min–max) of each side and the ratio after/before, as Markdown, to stdout. Needs root
# (losetup) and jq. Writes nothing into the tree.
# usage: bench/executor_ab.sh BEFORE_BUILD AFTER_BUILD   env: RUNTIME=2 REPEATS=5
set -euo pipefail
[ $# -eq 2 ] || { sed -n 2,7p "$0" >&2; exit 2; }
A=$1/agent/executor/blkbench-exec-bench B=$2/agent/executor/blkbench-exec-bench
for bin in "$A" "$B"; do [ -x "$bin" ] || { echo "no $bin" >&2; exit 2; }; done
RUNTIME=${RUNTIME:-2} REPEATS=${REPEATS:-5}
WORK=$(mktemp -d) IMG=/dev/shm/blkbench-executor-ab.$$.img LOOP=""
trap '[ -z "$LOOP" ] || losetup -d "$LOOP"; rm -rf "$WORK" "$IMG"' EXIT
truncate -s 1G "$IMG"
LOOP=$(losetup --direct-io=on -f --show "$IMG")
for row in "nop 32 1" "io_uring 32 1" "libaio 32 1" "psync 1 1"; do
  read -r engine qd nj <<< "$row"
  for ((rep = 0; rep < REPEATS; rep++)); do
    for who in before after; do
      bin=$A; [ "$who" = after ] && bin=$B
      "$bin" --filename="$LOOP" --rw=randread --bs=4096 --direct --ioengine="$engine" \
        --iodepth="$qd" --numjobs="$nj" --runtime="$RUNTIME" --norandommap > "$WORK/o.json"
      echo "$engine $qd $nj $who $(jq -r '"\(.iops) \(.cpu_us_per_io)"' "$WORK/o.json")" |
        tee -a "$WORK/runs" >&2
    done
  done
done
python3 - "$WORK/runs" <<'PY'
import collections, statistics, sys
runs = collections.defaultdict(list)
for line in open(sys.argv[1]):
    e, qd, nj, who, iops, cpu = line.split()
    runs[(f"{e} {qd} {nj}", who)].append(float(cpu))
print("| row (engine, depth, jobs) | before µs/IO | after µs/IO | after / before |")
print("|---|---:|---:|---:|")
for row in dict.fromkeys(r for r, _ in runs):
    a, b = runs[(row, "before")], runs[(row, "after")]
    ma, mb = statistics.median(a), statistics.median(b)
    print(f"| {row} | {ma:.3f} ({min(a):.3f}–{max(a):.3f}) | {mb:.3f} ({min(b):.3f}–{max(b):.3f}) | {mb / ma:.2f} |")
PY
