#!/usr/bin/env bash
# The controller's threads and RSS with 1,000 idle agent streams, three ways: the caps
# raised out of reach (the behaviour before the limits: a thread per stream, no bound),
# the defaults, and --max_agent_streams=200. Prints one line per configuration.
# Usage: bench/idle_streams.sh [BUILD_DIR] [STREAMS]   (default: build, 1000)
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build}"
streams="${2:-1000}"
ulimit -n 20000
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
run() {
  local label="$1"; shift
  rm -f "$dir/db"*
  "$build/controller/blkbench-controller" --listen "127.0.0.1:$port" --insecure --socket= \
    --db "$dir/db" --metrics_listen= "$@" 2>"$dir/log" &
  local pid=$!
  for _ in $(seq 100); do
    grep -q "serving on" "$dir/log" && break
    sleep 0.1  # waiting for a daemon to come up, not synchronising a test
  done
  echo "$label ($*): $("$build/controller/idle_streams_bench" --controller "127.0.0.1:$port" \
    --streams "$streams" --pid "$pid")"
  kill "$pid"
  wait "$pid" || true
}
run "caps out of reach" --max_agent_streams=100000 --unary_threads=64
run "defaults"
run "cap 200" --max_agent_streams=200
