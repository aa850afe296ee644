#!/usr/bin/env bash
# A/B of two blkbench-exec-bench binaries (e.g. before and after an executor change) on the
# same job, in ABBA order (A, B, B, A per round) so drift on a shared machine cancels; on a
# loop device over a file in /dev/shm. Prints each run and the medians. Needs root, jq.
#
# usage: bench/executor_ab.sh BIN_A BIN_B [extra blkbench-exec-bench flags...]
# env:   ROUNDS=6  RUNTIME=3 (s)  SIZE_MB=1024
# default job: randread 4k QD128, batch 32 (submit and complete), fixedbufs, registerfiles.
set -euo pipefail
[ $# -ge 2 ] || { sed -n 2,8p "$0" >&2; exit 2; }
A=$1 B=$2; shift 2
ROUNDS=${ROUNDS:-6}; RUNTIME=${RUNTIME:-3}; SIZE_MB=${SIZE_MB:-1024}
BACKING=/dev/shm/blkbench-ab-$$.img
LOOP=""
cleanup() {
  if [ -n "$LOOP" ]; then losetup -d "$LOOP" 2>/dev/null || true; fi
  rm -f "$BACKING" "$BACKING.runs"
}
trap cleanup EXIT INT TERM
fallocate -l "${SIZE_MB}M" "$BACKING"
LOOP=$(losetup -f --show "$BACKING")
JOB=(--filename="$LOOP" --rw=randread --bs=4096 --direct --ioengine=io_uring --iodepth=128
     --iodepth_batch_submit=32 --iodepth_batch_complete_min=32 --iodepth_batch_complete_max=32
     --fixedbufs --registerfiles --runtime="$RUNTIME" "$@")
for i in $(seq "$ROUNDS"); do
  for side in A B B A; do
    bin=$A; [ "$side" = B ] && bin=$B
    printf "%s %s " "$side" "$i"
    "$bin" "${JOB[@]}" | jq -r '"\(.iops) \(.cpu_us_per_io)"'
  done
done | tee "$BACKING.runs"
for side in A B; do
  for col in 3 4; do
    grep "^$side " "$BACKING.runs" | awk -v c=$col '{ print $c }' | sort -g |
      awk -v s=$side -v c=$col '{ v[NR] = $1 } END {
        m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
        printf "%s %s median %.4g (min %.4g, max %.4g)\n", s, c == 3 ? "IOPS" : "CPU us/IO", m, v[1], v[NR] }'
  done
done
