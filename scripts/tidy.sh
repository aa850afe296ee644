#!/usr/bin/env bash
# Runs clang-tidy (.clang-tidy) over the compile database of a build tree.
#   scripts/tidy.sh [BUILD_DIR]        files changed since the merge base with main, then
#                                      other files (a slice that rotates daily) until
#                                      BLKBENCH_TIDY_BUDGET seconds (default 600) are spent
#   scripts/tidy.sh --all [BUILD_DIR]  every .cc file of the tree (about 10 s of CPU each)
# Why a budget: the whole tree costs ~45 min of CPU (gRPC and protobuf headers), more
# than CI's two cores can spare; changed files are always checked, the rest in turn.
# Exit status 1 when a changed file (or, with --all or BLKBENCH_TIDY_STRICT=1, any checked
# file) has a finding; findings in the rotating slice are printed as warnings otherwise,
# until a full --all run has come back clean once.
set -euo pipefail
cd "$(dirname "$0")/.."
all=0
if [ "${1:-}" = "--all" ]; then
  all=1
  shift
fi
build="${1:-build}"
budget="${BLKBENCH_TIDY_BUDGET:-600}"
jobs="${BLKBENCH_JOBS:-$(nproc)}"
if [ ! -f "$build/compile_commands.json" ]; then
  echo "tidy: no $build/compile_commands.json (run scripts/build.sh first)" >&2
  exit 2
fi
command -v clang-tidy >/dev/null || { echo "tidy: clang-tidy not installed (scripts/deps.sh)" >&2; exit 2; }

# Our sources in the database (not generated protobuf code), as repo-relative paths.
mapfile -t in_db < <(python3 - "$build/compile_commands.json" "$PWD" <<'EOF'
import json, os, sys
root = sys.argv[2]
seen = set()
for e in json.load(open(sys.argv[1])):
    f = os.path.relpath(os.path.join(e["directory"], e["file"]), root)
    if not f.startswith(("build", "..")) and f.endswith(".cc") and f not in seen:
        seen.add(f)
        print(f)
EOF
)

if [ "$all" = 1 ]; then
  files=("${in_db[@]}")
  rest=()
else
  base="${BLKBENCH_TIDY_BASE:-}"
  if [ -z "$base" ]; then
    for ref in origin/main main; do
      base=$(git merge-base HEAD "$ref" 2>/dev/null) && break || base=""
    done
  fi
  # Changed .cc files, and the .cc beside each changed header.
  changed=()
  if [ -n "$base" ]; then
    while IFS= read -r f; do
      case "$f" in
        *.cc) changed+=("$f") ;;
        *.h) changed+=("${f%.h}.cc") ;;
      esac
    done < <(git diff --name-only "$base" -- '*.cc' '*.h'; git ls-files --others --exclude-standard '*.cc' '*.h')
  fi
  files=()
  rest=()
  for f in "${in_db[@]}"; do
    if printf '%s\n' "${changed[@]}" | grep -qxF "$f"; then files+=("$f"); else rest+=("$f"); fi
  done
  # The rest in a daily rotation, so every file is checked every few days.
  if [ "${#rest[@]}" -gt 0 ]; then
    shift_by=$(( $(date +%j | sed 's/^0*//') * 17 % ${#rest[@]} ))
    rest=("${rest[@]:$shift_by}" "${rest[@]:0:$shift_by}")
  fi
fi

start=$(date +%s)
log=$(mktemp)
trap 'rm -f "$log"' EXIT
failed=0
warned=0
checked=0
run_batch() {  # run_batch fatal|warn FILE...: clang-tidy on the files, $jobs in parallel
  local kind="$1"
  shift
  [ "$#" -gt 0 ] || return 0
  if ! printf '%s\n' "$@" | xargs -P "$jobs" -n 1 clang-tidy -p "$build" --quiet >"$log" 2>&1; then
    if [ "$kind" = fatal ]; then failed=1; else warned=1; fi
  fi
  grep -E 'warning:|error:' -A3 "$log" | grep -v 'warnings generated' || true
  checked=$((checked + $#))
}
rest_kind=warn
if [ "$all" = 1 ] || [ "${BLKBENCH_TIDY_STRICT:-0}" = 1 ]; then rest_kind=fatal; fi
echo "tidy: ${#files[@]} changed file(s), then up to ${budget}s of the other ${#rest[@]}"
run_batch fatal "${files[@]}"
i=0
while [ "$i" -lt "${#rest[@]}" ] && [ $(( $(date +%s) - start )) -lt "$budget" ]; do
  run_batch "$rest_kind" "${rest[@]:$i:$jobs}"
  i=$((i + jobs))
done
echo "tidy: $checked of ${#in_db[@]} files checked in $(( $(date +%s) - start ))s"
if [ "$warned" != 0 ]; then
  echo "tidy: findings above in files this branch did not change (not fatal yet)" >&2
fi
if [ "$failed" != 0 ]; then
  echo "tidy: findings above (fix them, or turn a noisy check off in .clang-tidy with a reason)" >&2
  exit 1
fi
