#!/usr/bin/env bash
# Executor vs fio per I/O engine: the same randread job with fio and with
# blkbench-exec-bench on one engine at a time (libaio, psync, sync, pvsync2, io_uring), on a
# loop device over a file in /dev/shm, alternating the tools; prints a Markdown table
# (medians) for docs/performance.md. Needs root (losetup), fio, jq.
#
# usage: bench/engines_vs_fio.sh [BUILD_DIR]   (default build)
# env:   RUNTIME=3 (s per run)  REPEATS=5 (median of)  SIZE_MB=1024
#        ENGINES="libaio:32 psync:1:1" — engine:iodepth[:cpu to pin both tools' job to]
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:-$ROOT/build}
BIN=$BUILD/agent/executor/blkbench-exec-bench
RUNTIME=${RUNTIME:-3}
REPEATS=${REPEATS:-5}
SIZE_MB=${SIZE_MB:-1024}
ENGINES=${ENGINES:-"libaio:1 libaio:1:1 libaio:32 psync:1 psync:1:1 sync:1:1 pvsync2:1:1"}

for tool in fio jq losetup; do
  command -v "$tool" >/dev/null || { echo "missing $tool" >&2; exit 2; }
done
[ -x "$BIN" ] || { echo "build $BIN first (ninja -C $BUILD blkbench-exec-bench)" >&2; exit 2; }

BACKING=/dev/shm/blkbench-engines-$$.img
LOOP=""
cleanup() {
  if [ -n "$LOOP" ]; then losetup -d "$LOOP" 2>/dev/null || true; fi
  rm -f "$BACKING"
}
trap cleanup EXIT INT TERM
fallocate -l "${SIZE_MB}M" "$BACKING"
LOOP=$(losetup -f --show "$BACKING")

# Prints "iops cpu_us_per_io" (job CPU: fio's usr+sys share of job_runtime; ours measured).
run_fio() {  # engine qd [cpu]
  fio --name=bench --filename="$LOOP" --rw=randread --bs=4k --direct=1 --ioengine="$1" \
    --iodepth="$2" ${3:+--cpus_allowed=$3} --runtime="$RUNTIME" --time_based --norandommap --output-format=json \
    2>/dev/null | jq -r '.jobs[0] | "\(.read.iops) \((.usr_cpu + .sys_cpu) / 100 *
      .job_runtime * 1000 / (if .read.total_ios > 0 then .read.total_ios else 1 end))"'
}
run_ours() {  # engine qd [cpu]
  "$BIN" --filename="$LOOP" --rw=randread --bs=4096 --direct --ioengine="$1" --iodepth="$2" \
    ${3:+--cpus_allowed=$3} --runtime="$RUNTIME" | jq -r '"\(.iops) \(.cpu_us_per_io)"'
}
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

echo "| ioengine | iodepth | pinned | IOPS ours | IOPS fio | IOPS ratio | job CPU µs/IO ours | fio | CPU ratio |"
echo "|---|---:|---|---:|---:|---:|---:|---:|---:|"
for spec in $ENGINES; do
  IFS=: read -r engine qd cpu <<<"$spec"
  : >/tmp/ef-ours.$$ ; : >/tmp/ef-fio.$$
  for i in $(seq "$REPEATS"); do
    if (( i % 2 )); then run_ours "$engine" "$qd" $cpu >>/tmp/ef-ours.$$; run_fio "$engine" "$qd" $cpu >>/tmp/ef-fio.$$
    else run_fio "$engine" "$qd" $cpu >>/tmp/ef-fio.$$; run_ours "$engine" "$qd" $cpu >>/tmp/ef-ours.$$; fi
  done
  oi=$(cut -d' ' -f1 /tmp/ef-ours.$$ | median); fi_=$(cut -d' ' -f1 /tmp/ef-fio.$$ | median)
  oc=$(cut -d' ' -f2 /tmp/ef-ours.$$ | median); fc=$(cut -d' ' -f2 /tmp/ef-fio.$$ | median)
  awk -v e="$engine" -v q="$qd" -v p="${cpu:+CPU $cpu}" -v oi="$oi" -v fi="$fi_" -v oc="$oc" -v fc="$fc" 'BEGIN {
    printf "| %s | %d | %s | %.0f | %.0f | **%.2f** | %.2f | %.2f | **%.2f** |\n", e, q, (p == "" ? "no" : p), oi, fi, oi / fi, oc, fc, oc / fc }'
done
rm -f /tmp/ef-ours.$$ /tmp/ef-fio.$$
echo
echo "$(nproc) CPUs, kernel $(uname -r), $(fio --version), median of $REPEATS × ${RUNTIME}s per tool, alternating; $(date -u +%F)."
