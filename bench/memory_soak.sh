#!/usr/bin/env bash
# Daemon memory over runs: starts a real blkbench-controller (SQLite in a temporary
# directory, its Unix socket, /metrics on a free loopback port) and a real blkbench-agent
# offering only sim:null_blk, drives RUNS runs of a 20 ms sim cell through them
# (bench/memory_soak.cc) and prints both daemons' VmRSS every EVERY runs as a table.
# Nothing is written into the tree: the table goes to stdout, or to --out FILE.
#
# Usage: bench/memory_soak.sh [--build DIR] [--runs N] [--every K] [--batch B]
#                             [--out FILE] [--grace_ms MS] [--keep]
#   --grace_ms  both daemons' metrics grace (default: theirs, 5 minutes)
#   --keep      keep the temporary directory (logs, database) and print its path
# Environment: anything for both daemons, e.g. MALLOC_ARENA_MAX=2; CONTROLLER_WRAP and
# AGENT_WRAP prefix a daemon's command (e.g. "heaptrack -o /tmp/c"; the RSS column is then
# the daemon's, found as the wrapper's child); STOP_SIGNAL=KILL ends the daemons without
# their teardown, so heaptrack reports what they held at the end as leaked.
set -euo pipefail
cd "$(dirname "$0")/.."
build=build runs=10000 every=1000 batch=100 out="" grace="" keep=0
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build="$2"; shift 2 ;;
    --runs) runs="$2"; shift 2 ;;
    --every) every="$2"; shift 2 ;;
    --batch) batch="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --grace_ms) grace="$2"; shift 2 ;;
    --keep) keep=1; shift ;;
    *) sed -n '2,15p' "$0" >&2; exit 2 ;;
  esac
done
for bin in controller/blkbench-controller agent/blkbench-agent bench/memory_soak; do
  [ -x "$build/$bin" ] || { echo "memory_soak: $build/$bin is not built" >&2; exit 1; }
done
dir=$(mktemp -d /tmp/blkbench-soak.XXXXXX)
pids=()
# The daemon's own pid: $1, or with a wrapper the child of $1 that runs binary $2.
daemon_pid() {
  [ -z "$3" ] && { echo "$1"; return; }
  for _ in $(seq 300); do
    local c
    for c in $(pgrep -P "$1" || true); do
      case "$(readlink "/proc/$c/exe" 2>/dev/null)" in */"$2") echo "$c"; return ;; esac
    done
    sleep 0.1  # waiting for the wrapper to start the daemon
  done
  echo "$1"
}
cleanup() {
  # The daemons (children of a wrapper too), then the wrappers.
  for p in "${pids[@]}"; do pkill -"${STOP_SIGNAL:-TERM}" -P "$p" 2>/dev/null || true; kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  if [ "$keep" = 1 ]; then echo "memory_soak: kept $dir" >&2; else rm -rf "$dir"; fi
}
trap cleanup EXIT

sock="$dir/controller.sock"
controller_flags=(--socket "$sock" --db "$dir/blkbench.db" --metrics_listen 127.0.0.1:0)
[ -n "$grace" ] && controller_flags+=(--metrics_grace_ms "$grace")
${CONTROLLER_WRAP:-} "$build/controller/blkbench-controller" "${controller_flags[@]}" 2>"$dir/controller.log" &
pids+=($!)
cpid=$(daemon_pid $! blkbench-controller "${CONTROLLER_WRAP:-}")
for _ in $(seq 100); do
  [ -S "$sock" ] && break
  sleep 0.1  # waiting for a daemon to come up, not synchronising a test
done
{
  echo "controller: unix:$sock"
  echo "agent_id: soak-agent"
  echo "state_dir: $dir/agent"
  echo "devices: []"
  echo "sim_devices: [sim:null_blk]"
  echo "metrics_listen: 127.0.0.1:0"
  [ -n "$grace" ] && echo "metrics_grace_ms: $grace"
} >"$dir/agent.yaml"
${AGENT_WRAP:-} "$build/agent/blkbench-agent" --config "$dir/agent.yaml" 2>"$dir/agent.log" &
pids+=($!)
apid=$(daemon_pid $! blkbench-agent "${AGENT_WRAP:-}")

echo "memory_soak: $runs runs of a 20 ms sim:null_blk cell, experiments of $batch;" \
  "controller pid $cpid, agent pid $apid${grace:+, metrics grace $grace ms}" >&2
soak=("$build/bench/memory_soak" --controller "unix:$sock" --controller_pid "$cpid"
  --agent_pid "$apid" --runs "$runs" --every "$every" --batch "$batch")
[ -n "$out" ] && soak+=(--out "$out")
"${soak[@]}"
