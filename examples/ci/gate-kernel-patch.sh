#!/usr/bin/env bash
# gate-kernel-patch.sh: one CI step that decides whether a kernel change regresses I/O.
#
#   sim: kernels (no test host; the engine models both):
#     gate-kernel-patch.sh --baseline sim:6.16 --candidate sim:6.16+dd-batch-dispatch
#   real kernels in VM test hosts (qemu on the CI runner; no hooks):
#     gate-kernel-patch.sh --vm null_blk --baseline 'deb:6.12*' --candidate out/bzImage:out/mods
#   real kernels on a bare-metal test host (the lab fills in examples/ci/hooks.sh):
#     BLKBENCH_CI_HOOKS=hooks.sh gate-kernel-patch.sh --baseline v6.12 --candidate HEAD
#
# Options: --matrix FILE (default: kernel-gate.yaml beside this script, kernel-gate-vm.yaml
# with --vm), --junit FILE, --markdown FILE, --html FILE, --json FILE, --metrics LIST,
# --auto-repeat N, --min-effect F (all passed to `blkbench gate`), --timeout DURATION
# (default 2h; per wait), --runtime DURATION (overrides the matrix job's runtime),
# --baseline-experiment ID (reuse a finished baseline: hook mode only).
#
# --vm KIND[:KEY=VALUE,...] (KIND null_blk, nvme, hdd or virtio, as `blkbench run --vm`
# takes it) makes --baseline and --candidate kernel specs: deb:PATTERN (a Debian package,
# newest match) or PATH/bzImage[:MODULES_DIR]. With $BLKBENCH_CONTROLLER the script starts
# a transient agent (${BLKBENCH_AGENT:-blkbench-agent}) with two VM test hosts, base and
# cand, one per kernel; waits until it offers both guests' devices; submits the matrix with
# the kernel axis set to the two guests' releases; gates; and stops the agent (and so its
# guests) however it ends. With mutual TLS the agent uses $BLKBENCH_CI_AGENT_TLS_DIR (the
# lab CA and one agent certificate; its id from $BLKBENCH_CI_AGENT_ID or the single
# agent-ID.pem there); $BLKBENCH_CI_VM_ACCEL (auto, kvm, tcg) sets the guests' accel.
# Without $BLKBENCH_CONTROLLER it runs daemon-less (`blkbench run --vm ... --kernel B
# --kernel C`) and gates the local store. See docs/ci.md.
#
# The controller is $BLKBENCH_CONTROLLER (on another host: with mutual TLS,
# $BLKBENCH_TLS_DIR; the CLI refuses plain text there). Exit status is the gate's:
# 0 pass, 1 regression, 2 inconclusive, 3 could not run (bad arguments, controller
# unreachable, a hook failed, a guest did not boot, both kernels have one release, no
# agent offers the kernel before --timeout).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
blkbench=${BLKBENCH:-blkbench}
matrix="" baseline="" candidate="" baseline_exp="" timeout=2h vm="" runtime=""
gate_opts=()
die() { echo "gate-kernel-patch: $*" >&2; exit 3; }
while [ $# -gt 0 ]; do
  [ $# -ge 2 ] || die "$1 needs a value"
  case "$1" in
    --baseline) baseline=$2 ;;
    --candidate) candidate=$2 ;;
    --matrix) matrix=$2 ;;
    --baseline-experiment) baseline_exp=$2 ;;
    --timeout) timeout=$2 ;;
    --vm) vm=$2 ;;
    --runtime) runtime=$2 ;;
    --junit|--markdown|--html|--json|--metrics|--auto-repeat|--min-effect)
      gate_opts+=("$1" "$2") ;;
    *) die "unknown argument '$1'" ;;
  esac
  shift 2
done
if [ -z "$baseline" ] || [ -z "$candidate" ]; then die "--baseline and --candidate are required"; fi
if [ -z "$matrix" ]; then
  matrix="$here/kernel-gate.yaml"
  [ -z "$vm" ] || matrix="$here/kernel-gate-vm.yaml"
fi
[ -r "$matrix" ] || die "cannot read the matrix $matrix"
grep -q '# ci-kernels' "$matrix" || die "$matrix has no 'kernel: [...]  # ci-kernels' line"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The matrix with its kernel axis set to the given kernels (quoted YAML strings), or with
# that line removed when $1 is empty; with --runtime, the job's runtime replaced.
with_kernels() {
  local list=$1 out=$2
  if [ -n "$list" ]; then
    sed -E "s|^([[:space:]]*kernel:).*# ci-kernels\$|\\1 [$list]  # ci-kernels|" "$matrix" > "$out"
  else
    sed -E '/# ci-kernels$/d' "$matrix" > "$out"
  fi
  if [ -n "$runtime" ]; then
    grep -qE '^[[:space:]]+runtime:' "$out" || die "--runtime: $matrix has no 'runtime:' line in its job"
    sed -i -E "s|^([[:space:]]+runtime:).*\$|\\1 $runtime|" "$out"
  fi
  "$blkbench" validate "$out" >/dev/null || exit 3
}

timeout_seconds() {
  case "$timeout" in
    *h) echo $(( ${timeout%h} * 3600 )) ;; *m) echo $(( ${timeout%m} * 60 )) ;;
    *s) echo "${timeout%s}" ;; *) echo "$timeout" ;;
  esac
}

if [ -n "$vm" ]; then
  [ -z "$baseline_exp" ] || die "--baseline-experiment is for hook mode (one experiment per kernel)"
  # shellcheck source=vm-lab.sh source-path=SCRIPTDIR
  source "$here/vm-lab.sh"
  vm_parse "$vm"
  if [ -n "${BLKBENCH_CONTROLLER:-}" ]; then
    vm_gate_with_controller
  else
    vm_gate_daemonless
  fi
  # shellcheck disable=SC2317  # (not reached: each exits with the gate's code)
  exit 3
fi

case "$baseline$candidate" in
  sim:*sim:*)
    # Both kernels in one experiment; the gate compares them cell by cell.
    with_kernels "\"$baseline\", \"$candidate\"" "$work/matrix.yaml"
    # (Not exec: the EXIT trap removes $work.)
    "$blkbench" gate --submit "$work/matrix.yaml" --axis kernel --baseline "$baseline" \
      --candidate "$candidate" --timeout "$timeout" "${gate_opts[@]}" || exit
    exit 0 ;;
esac

# Real kernels: one experiment per kernel, the test host booted into each in turn.
[ -n "${BLKBENCH_CI_HOOKS:-}" ] || die "real kernels need --vm KIND (VM test hosts) or BLKBENCH_CI_HOOKS (see examples/ci/hooks.example.sh)"
# shellcheck source=/dev/null
source "$BLKBENCH_CI_HOOKS"

# Waits until a connected agent reports kernel release $1 (bounded by --timeout).
wait_for_agent_kernel() {
  local release=$1 deadline=$(( $(date +%s) + $(timeout_seconds) ))
  until "$blkbench" agents --format csv | awk -F, -v r="$release" 'NR > 1 && $2 == "connected" && $3 == r { found = 1 } END { exit !found }'; do
    if [ "$(date +%s)" -ge "$deadline" ]; then
      echo "gate-kernel-patch: no agent registered kernel $release within $timeout" >&2
      return 1
    fi
    sleep 10
  done
}

# Runs the matrix on kernel $1 (a git revision); prints the experiment id.
run_on_kernel() {
  local rev=$1 release id
  release=$(build_kernel "$rev") || { echo "gate-kernel-patch: build_kernel $rev failed" >&2; return 1; }
  boot_test_host "$release" || { echo "gate-kernel-patch: boot_test_host $release failed" >&2; return 1; }
  wait_for_agent_kernel "$release" || return 1
  with_kernels "\"$release\"" "$work/$rev.yaml"
  id=$("$blkbench" submit -q "$work/$rev.yaml")
  "$blkbench" watch "$id" --progress plain >&2 || true  # the gate reports failed runs
  echo "$id"
}

base_id=$baseline_exp
[ -n "$base_id" ] || base_id=$(run_on_kernel "$baseline") || exit 3
cand_id=$(run_on_kernel "$candidate") || exit 3
"$blkbench" gate --baseline "$base_id" --candidate "$cand_id" --wait --timeout "$timeout" "${gate_opts[@]}"
