#!/usr/bin/env bash
# Runs clang-tidy (.clang-tidy) over the compile database of a build tree. Which files are
# checked depends only on the tree and the branch, never on the date or the machine's speed:
#   scripts/tidy.sh [BUILD_DIR]            files changed since the merge base with main
#                                          (fatal), then every other file of the tree
#                                          (printed as warnings; BLKBENCH_TIDY_STRICT=1
#                                          makes them fatal). BLKBENCH_TIDY_PART=K/N limits
#                                          the other files to part K of N.
#   scripts/tidy.sh --changed [BUILD_DIR]  only the changed files (fatal)
#   scripts/tidy.sh --part K/N [BUILD_DIR] part K (1..N) of the whole tree (fatal)
#   scripts/tidy.sh --all [BUILD_DIR]      the whole tree (fatal), the same as --part 1/1
# The parts are fixed: a file's part is a hash of its path modulo N, so adding or removing
# a file moves no other file to another part, and N machines running --part 1/N .. N/N
# check the whole tree between them.
# What it costs (README.md, "Tests: lanes and how long they take"): about 10 s of CPU per
# file (gRPC and protobuf headers), so the whole tree is ~45 min of CPU, ~25 min on two
# cores; a few changed files take under a minute.
# Changed files: .cc files and the .cc beside each changed header, against the merge base
# with origin/main or main (BLKBENCH_TIDY_BASE=REV to choose another), plus untracked ones.
# A file that fails tidy fails the run at the end, after every file is checked.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=default
part="${BLKBENCH_TIDY_PART:-1/1}"
case "${1:-}" in
  --all) mode=part; part=1/1; shift ;;
  --changed) mode=changed; shift ;;
  --part)
    mode=part
    part="${2:-}"
    shift 2 || { echo "usage: $0 --part K/N [BUILD_DIR]" >&2; exit 2; }
    ;;
  -*) echo "usage: $0 [--changed | --part K/N | --all] [BUILD_DIR]" >&2; exit 2 ;;
esac
if ! [[ "$part" =~ ^([0-9]+)/([0-9]+)$ ]] || [ "${BASH_REMATCH[1]}" -lt 1 ] ||
   [ "${BASH_REMATCH[1]}" -gt "${BASH_REMATCH[2]}" ]; then
  echo "tidy: part '$part' is not K/N with 1 <= K <= N" >&2
  exit 2
fi
build="${1:-build}"
jobs="${BLKBENCH_JOBS:-$(nproc)}"
if [ ! -f "$build/compile_commands.json" ]; then
  echo "tidy: no $build/compile_commands.json (run scripts/build.sh first)" >&2
  exit 2
fi
command -v clang-tidy >/dev/null || { echo "tidy: clang-tidy not installed (scripts/deps.sh)" >&2; exit 2; }

# Our sources in the database (not generated protobuf code), as repo-relative paths, sorted,
# each with its part for the N of $part (1-based: a hash of the path, modulo N).
mapfile -t in_db < <(python3 - "$build/compile_commands.json" "$PWD" "${part#*/}" <<'EOF'
import hashlib, json, os, sys
root, n = sys.argv[2], int(sys.argv[3])
seen = set()
for e in json.load(open(sys.argv[1])):
    f = os.path.relpath(os.path.join(e["directory"], e["file"]), root)
    if not f.startswith(("build", "..")) and f.endswith(".cc"):
        seen.add(f)
for f in sorted(seen):
    print(int(hashlib.sha256(f.encode()).hexdigest()[:8], 16) % n + 1, f)
EOF
)

changed=()
if [ "$mode" != part ]; then
  base="${BLKBENCH_TIDY_BASE:-}"
  if [ -z "$base" ]; then
    for ref in origin/main main; do
      base=$(git merge-base HEAD "$ref" 2>/dev/null) && break || base=""
    done
  fi
  if [ -z "$base" ]; then
    echo "tidy: no merge base with origin/main or main (set BLKBENCH_TIDY_BASE)" >&2
    exit 2
  fi
  while IFS= read -r f; do
    case "$f" in
      *.cc) changed+=("$f") ;;
      *.h) changed+=("${f%.h}.cc") ;;
    esac
  done < <(git diff --name-only "$base" -- '*.cc' '*.h'; git ls-files --others --exclude-standard '*.cc' '*.h')
fi

fatal=()  # checked, findings fail the run
rest=()   # checked, findings fail the run only when strict
for entry in "${in_db[@]}"; do
  p="${entry%% *}"
  f="${entry#* }"
  if [ "$mode" = part ]; then
    [ "$p" = "${part%/*}" ] && fatal+=("$f")
  elif [ "${#changed[@]}" -gt 0 ] && printf '%s\n' "${changed[@]}" | grep -qxF "$f"; then
    fatal+=("$f")
  elif [ "$mode" = default ] && [ "$p" = "${part%/*}" ]; then
    rest+=("$f")
  fi
done
if [ "${BLKBENCH_TIDY_STRICT:-0}" = 1 ]; then
  fatal+=("${rest[@]}")
  rest=()
fi

start=$(date +%s)
log=$(mktemp)
trap 'rm -f "$log"' EXIT
failed=0
warned=0
run_files() {  # run_files fatal|warn FILE...: clang-tidy on each file, $jobs in parallel
  local kind="$1"
  shift
  [ "$#" -gt 0 ] || return 0
  if ! printf '%s\n' "$@" | xargs -P "$jobs" -n 1 clang-tidy -p "$build" --quiet >"$log" 2>&1; then
    if [ "$kind" = fatal ]; then failed=1; else warned=1; fi
  fi
  grep -E 'warning:|error:' -A3 "$log" | grep -v 'warnings generated' || true
}
case "$mode" in
  part) echo "tidy: part $part of the tree: ${#fatal[@]} of ${#in_db[@]} files" ;;
  changed) echo "tidy: ${#fatal[@]} changed file(s) since ${base:0:12}" ;;
  *) echo "tidy: ${#fatal[@]} file(s) changed since ${base:0:12} or strict, then ${#rest[@]} others (part $part)" ;;
esac
run_files fatal "${fatal[@]}"
run_files warn "${rest[@]}"
echo "tidy: $(( ${#fatal[@]} + ${#rest[@]} )) of ${#in_db[@]} files checked in $(( $(date +%s) - start ))s"
if [ "$warned" != 0 ]; then
  echo "tidy: findings above in files this branch did not change (not fatal unless BLKBENCH_TIDY_STRICT=1)" >&2
fi
if [ "$failed" != 0 ]; then
  echo "tidy: findings above (fix them, or turn a noisy check off in .clang-tidy with a reason)" >&2
  exit 1
fi
