#!/usr/bin/env bash
# The blkbench demo on one machine: installs dependencies, builds, starts a controller
# (SQLite in a state directory) and a local agent whose allowlist is a loop device made
# here (backed by /dev/shm), submits examples/quickstart.yaml, watches it live, prints
# the results, and cleans up: agent stopped (queue settings restored), loop detached.
# Run as root (loop devices and sysfs queue settings need it).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
matrix="${1:-examples/quickstart.yaml}"

scripts/deps.sh
scripts/build.sh release >/dev/null
bin="$root/build"

state=$(mktemp -d /tmp/blkbench-demo.XXXXXX)
# The controller's Unix socket (not TCP): root — this script — is admin on it, other
# local users may only read (docs/security.md "The local default").
sock="$state/controller.sock"
backing=/dev/shm/blkbench-demo.$$.img
loop=""
pids=()
cleanup() {
  set +e
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
  if [ -n "$loop" ]; then
    echo "demo: scheduler of $loop after the run: $(cat /sys/block/${loop#/dev/}/queue/scheduler)"
    losetup -d "$loop"
  fi
  rm -f "$backing"
  echo "demo: cleaned up (state kept in $state)"
}
trap cleanup EXIT

truncate -s 1G "$backing"
loop=$(losetup -f --show "$backing")
echo "demo: loop device $loop, scheduler before: $(cat /sys/block/${loop#/dev/}/queue/scheduler)"

cat > "$state/agent.yaml" <<YAML
controller: unix:$sock
agent_id: demo-agent
state_dir: $state/agent
devices:
  - {path: $loop, class: loop}
YAML

"$bin/controller/blkbench-controller" --socket "$sock" --db "$state/blkbench.db" \
  --heartbeat_ms 1000 2>"$state/controller.log" &
pids+=($!)
export BLKBENCH_CONTROLLER="unix:$sock"
for _ in $(seq 50); do "$bin/cli/blkbench" list >/dev/null 2>&1 && break; sleep 0.2; done
"$bin/agent/blkbench-agent" --config "$state/agent.yaml" 2>"$state/agent.log" &
pids+=($!)
for _ in $(seq 50); do
  "$bin/cli/blkbench" agents 2>/dev/null | grep -q connected && break; sleep 0.2
done
"$bin/cli/blkbench" agents

echo
"$bin/cli/blkbench" validate "$matrix" | head -n 1
"$bin/cli/blkbench" submit "$matrix" --watch
exp=$("$bin/cli/blkbench" list | awk 'NR==2 {print $1}')
echo
"$bin/cli/blkbench" results "$exp"
