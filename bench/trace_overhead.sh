#!/usr/bin/env bash
# The cost of `trace: 1` and of `blkbench run --trace`: blkbench-trace-bench
# (bench/trace_overhead.cc) on a loop device over a file in /dev/shm, randread 4k through
# the agent's executor plain, with the block trace, and with the trace and its blkparse
# text written to a file; ABC-CBA rounds. Needs root.
#
# usage: bench/trace_overhead.sh [BUILD_DIR] [extra blkbench-trace-bench flags...]
# env:   SIZE_MB=1024
set -euo pipefail
BUILD=${1:-build}; shift || true
SIZE_MB=${SIZE_MB:-1024}
BACKING=/dev/shm/blkbench-trace-$$.img
STATE=$(mktemp -d /tmp/blkbench-trace-bench.XXXXXX)
LOOP=""
cleanup() {
  if [ -n "$LOOP" ]; then losetup -d "$LOOP" 2>/dev/null || true; fi
  rm -rf "$BACKING" "$STATE"
}
trap cleanup EXIT INT TERM
fallocate -l "${SIZE_MB}M" "$BACKING"
LOOP=$(losetup -f --show "$BACKING")
"$BUILD/bench/blkbench-trace-bench" --device="$LOOP" --state_dir="$STATE/state" "$@"
