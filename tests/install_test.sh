#!/usr/bin/env bash
# Install test: what `cmake --install` and the .deb give a machine that never built the
# code. Installs the build tree into a temporary prefix, builds the .deb and unpacks it
# elsewhere; from the unpacked tree (outside the build tree, so nothing falls back to the
# source) runs a real controller and agent and a sim: experiment through them.
# Usage: install_test.sh BUILD_DIR SOURCE_DIR [SANITIZED (ON/OFF)]
set -euo pipefail
build=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
sanitized=${3:-OFF}
tmp=$(mktemp -d /tmp/blkbench_install_test.XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# 1. cmake --install: every piece lands where docs/deploy.md says.
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
for f in bin/blkbench bin/blkbench-controller bin/blkbench-agent \
         share/blkbench/profiles/desktop-16.yaml share/blkbench/dashboards/fleet.json \
         share/blkbench/examples/quickstart.yaml share/blkbench/config/agent.example.yaml \
         lib/systemd/system/blkbench-agent.service lib/systemd/system/blkbench-controller.service \
         share/bash-completion/completions/blkbench share/zsh/vendor-completions/_blkbench \
         share/man/man1/blkbench.1.gz share/man/man8/blkbench-agent.8.gz \
         share/man/man8/blkbench-controller.8.gz share/doc/blkbench/copyright \
         share/doc/blkbench/changelog.gz etc/blkbench/agent.yaml; do
  [ -e "$tmp/prefix/$f" ] || fail "cmake --install did not install $f"
done
grep -q "^ExecStart=$tmp/prefix/bin/blkbench-agent " "$tmp/prefix/lib/systemd/system/blkbench-agent.service" \
  || fail "the agent unit does not start the installed binary"
cat > "$tmp/sim.yaml" <<'YAML'
name: install-test
job: {rw: randread, bs: 4k, iodepth: 4, ioengine: io_uring, runtime: 20ms, time_based: 1}
matrix:
  kernel: ["sim:6.16", "sim:6.16+dd-batch-dispatch"]
target: {device_class: sim:null_blk}
YAML
rows=$(cd / && "$tmp/prefix/bin/blkbench" sim "$tmp/sim.yaml" -q --format csv | wc -l)
[ "$rows" = 3 ] || fail "installed blkbench sim printed $rows CSV lines, expected 3"
# Without its profiles an installed agent offers no sim: classes, and says why.
mv "$tmp/prefix/share/blkbench/profiles" "$tmp/profiles.away"
if (cd / && "$tmp/prefix/bin/blkbench" sim "$tmp/sim.yaml" -q >/dev/null 2>"$tmp/sim.err"); then
  fail "sim without profiles succeeded"
fi
grep -q "share/blkbench/profiles/desktop-16.yaml" "$tmp/sim.err" || fail "no clear error: $(cat "$tmp/sim.err")"
printf 'controller: unix:%s/none.sock\nagent_id: a\nstate_dir: %s/st0\nmetrics_listen: ""\n' "$tmp" "$tmp" > "$tmp/a0.yaml"
timeout 3 "$tmp/prefix/bin/blkbench-agent" --config "$tmp/a0.yaml" 2>"$tmp/a0.log" || true
grep -q "not offering simulated devices" "$tmp/a0.log" || fail "agent without profiles: $(cat "$tmp/a0.log")"

# 2. The .deb: runtime dependencies only, and it works unpacked anywhere.
# Into this test's own directory: the lintian test (deb_lintian_test.sh) packages too.
deb=$("$src/scripts/package.sh" "$build" "$tmp/package" 2>"$tmp/cpack.log") \
  || fail "scripts/package.sh: $(cat "$tmp/cpack.log")"
depends=$(dpkg-deb -f "$deb" Depends)
# An ASan+UBSan build links the sanitizer runtimes; a release package never does.
if [ "$sanitized" = ON ]; then
  depends=$(echo "$depends" | tr ',' '\n' | grep -v -E 'libasan|libubsan' | paste -sd, -)
fi
case "$depends" in *-dev*|*g++*|*cmake*) fail "the .deb depends on build tools: $depends" ;; esac
case "$depends" in *libgrpc++*) ;; *) fail "the .deb does not depend on libgrpc++: $depends" ;; esac
# scripts/deps.sh --runtime installs every library the package depends on.
runtime=$(sed -n '/^RUNTIME_PKGS=(/,/^)/p' "$src/scripts/deps.sh")
for pkg in $(echo "$depends" | tr ',' '\n' | sed 's/(.*//; s/ //g'); do
  case "$pkg" in libc6|libgcc-s1|libstdc++6) continue ;; esac  # always on Debian
  echo "$runtime" | grep -qw -- "$pkg" || fail "scripts/deps.sh --runtime lacks $pkg (a Depends of the .deb)"
done
dpkg-deb -x "$deb" "$tmp/root"
bin="$tmp/root/usr/bin"
"$bin/blkbench" --version | grep -q "^blkbench " || fail "unpacked blkbench --version"
sock="$tmp/c.sock"
"$bin/blkbench-controller" --listen= --socket="$sock" --metrics_listen= --db="$tmp/c.db" \
  --heartbeat_ms=200 --sample_interval_ms=100 2>"$tmp/controller.log" &
pids+=($!)
printf 'controller: unix:%s\nagent_id: deb-agent\nstate_dir: %s/st1\nmetrics_listen: ""\nsim_devices: [sim:null_blk]\n' \
  "$sock" "$tmp" > "$tmp/a1.yaml"
(cd / && exec "$bin/blkbench-agent" --config "$tmp/a1.yaml" 2>"$tmp/agent.log") &
pids+=($!)
export BLKBENCH_CONTROLLER="unix:$sock"
# The agent registers within its first connect (no fixed sleep: poll, bounded).
for _ in $(seq 1 100); do
  "$bin/blkbench" agents --format csv 2>/dev/null | grep -q "deb-agent,connected" && break
  sleep 0.1
done
"$bin/blkbench" agents --format csv | grep -q "deb-agent,connected,.*,sim:null_blk" \
  || fail "the unpacked agent did not offer sim:null_blk: $(cat "$tmp/agent.log")"
id=$("$bin/blkbench" submit -q "$tmp/sim.yaml")
"$bin/blkbench" watch "$id" --progress none || fail "experiment $id did not end done: $("$bin/blkbench" show "$id")"
"$bin/blkbench" results "$id" --format json > "$tmp/results.json"
python3 - "$tmp/results.json" <<'PY' || fail "results: $(cat "$tmp/results.json")"
import json, sys
rows = json.load(open(sys.argv[1]))
assert len(rows) == 2 and all(r["state"] == "done" and r["iops"] > 0 for r in rows), rows
PY
echo "install test passed: cmake --install, the .deb ($(du -h "$deb" | cut -f1)), and a sim experiment through the unpacked daemons"
