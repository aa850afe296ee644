#!/usr/bin/env bash
# gate-kernel-patch.sh: one CI step that decides whether a kernel change regresses I/O.
#
#   sim: kernels (no test host; the engine models both):
#     gate-kernel-patch.sh --baseline sim:6.16 --candidate sim:6.16+dd-batch-dispatch
#   real kernels on a test host (the lab fills in examples/ci/hooks.sh):
#     BLKBENCH_CI_HOOKS=hooks.sh gate-kernel-patch.sh --baseline v6.12 --candidate HEAD
#
# Options: --matrix FILE (default: kernel-gate.yaml beside this script), --junit FILE,
# --markdown FILE, --html FILE, --metrics LIST, --auto-repeat N, --timeout DURATION
# (default 2h; per wait), --baseline-experiment ID (reuse a finished baseline: real
# kernels only). The controller is $BLKBENCH_CONTROLLER (on another host: with mutual TLS,
# $BLKBENCH_TLS_DIR; the CLI refuses plain text there). Exit status is the gate's:
# 0 pass, 1 regression, 2 inconclusive, 3 could not run (no agent offers the kernel
# before --timeout, controller unreachable, a hook failed).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
blkbench=${BLKBENCH:-blkbench}
matrix="$here/kernel-gate.yaml"
baseline="" candidate="" baseline_exp="" timeout=2h
gate_opts=()
while [ $# -gt 0 ]; do
  case "$1" in
    --baseline) baseline=$2; shift 2 ;;
    --candidate) candidate=$2; shift 2 ;;
    --matrix) matrix=$2; shift 2 ;;
    --baseline-experiment) baseline_exp=$2; shift 2 ;;
    --timeout) timeout=$2; shift 2 ;;
    --junit|--markdown|--html|--json|--metrics|--auto-repeat|--min-effect)
      gate_opts+=("$1" "$2"); shift 2 ;;
    *) echo "gate-kernel-patch: unknown argument '$1'" >&2; exit 3 ;;
  esac
done
[ -n "$baseline" ] && [ -n "$candidate" ] || { echo "gate-kernel-patch: --baseline and --candidate are required" >&2; exit 3; }
grep -q '# ci-kernels' "$matrix" || { echo "gate-kernel-patch: $matrix has no 'kernel: [...]  # ci-kernels' line" >&2; exit 3; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The matrix with its kernel axis set to the given kernels (quoted YAML strings).
with_kernels() {
  local list=$1 out=$2
  sed -E "s|^([[:space:]]*kernel:).*# ci-kernels\$|\\1 [$list]  # ci-kernels|" "$matrix" > "$out"
  "$blkbench" validate "$out" >/dev/null || exit 3
}

case "$baseline$candidate" in
  sim:*sim:*)
    # Both kernels in one experiment; the gate compares them cell by cell.
    with_kernels "\"$baseline\", \"$candidate\"" "$work/matrix.yaml"
    exec "$blkbench" gate --submit "$work/matrix.yaml" --axis kernel \
      --baseline "$baseline" --candidate "$candidate" --timeout "$timeout" "${gate_opts[@]}" ;;
esac

# Real kernels: one experiment per kernel, the test host booted into each in turn.
[ -n "${BLKBENCH_CI_HOOKS:-}" ] || { echo "gate-kernel-patch: real kernels need BLKBENCH_CI_HOOKS (see examples/ci/hooks.example.sh)" >&2; exit 3; }
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
timeout_seconds() {
  case "$timeout" in
    *h) echo $(( ${timeout%h} * 3600 )) ;; *m) echo $(( ${timeout%m} * 60 )) ;;
    *s) echo "${timeout%s}" ;; *) echo "$timeout" ;;
  esac
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
exec "$blkbench" gate --baseline "$base_id" --candidate "$cand_id" --wait --timeout "$timeout" "${gate_opts[@]}"
