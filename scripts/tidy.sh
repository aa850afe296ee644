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
# file (gRPC and protobuf headers), so the whole tree (400 files) is ~70 min of CPU, ~35 min
# on two idle cores; a few changed files take under a minute; the cache below makes a
# repeated run cost only the files whose inputs changed.
# Changed files: .cc files and the .cc beside each changed header, against the merge base
# with origin/main or main (BLKBENCH_TIDY_BASE=REV to choose another), plus untracked ones.
# A file that fails tidy fails the run at the end, after every file is checked.
# Clean results are cached (BLKBENCH_TIDY_CACHE, default ~/.cache/blkbench-tidy; =off to
# not use it): a file is checked again only when the file, a header it includes (as the
# build's ninja deps list them), its compile command, .clang-tidy or clang-tidy itself
# changed. The cache decides only whether to repeat a check with identical inputs, so it
# changes how long a run takes, never what it finds; findings are never cached.
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
n_changed=${#fatal[@]}
n_rest=${#rest[@]}
if [ "${BLKBENCH_TIDY_STRICT:-0}" = 1 ]; then
  fatal+=("${rest[@]}")
  rest=()
fi

start=$(date +%s)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cache="${BLKBENCH_TIDY_CACHE:-$HOME/.cache/blkbench-tidy}"
[ "$cache" = off ] || mkdir -p "$cache"
# keys FILE...: "FILE KEY" per file, KEY a hash of everything clang-tidy reads for it
# ("-" when the build has no deps for it: never cached).
keys() {
  if [ "$cache" = off ]; then
    printf '%s -\n' "$@"
    return
  fi
  python3 - "$build" "$@" <<'EOF'
import hashlib, json, os, re, subprocess, sys
build, files = sys.argv[1], sys.argv[2:]
root = os.getcwd()
version = subprocess.run(["clang-tidy", "--version"], capture_output=True, text=True).stdout
config = open(".clang-tidy", "rb").read() if os.path.exists(".clang-tidy") else b""
commands = {}
for e in json.load(open(os.path.join(build, "compile_commands.json"))):
    commands[os.path.relpath(os.path.join(e["directory"], e["file"]), root)] = e
# ninja -t deps: "OBJECT: #deps N, deps mtime M (VALID)", then one indented path a line.
deps, obj = {}, None
out = subprocess.run(["ninja", "-C", build, "-t", "deps"], capture_output=True, text=True).stdout
for line in out.splitlines():
    if line and not line.startswith(" "):
        obj = line.split(":")[0] if "(VALID)" in line else None
        if obj:
            deps[obj] = []
    elif obj and line.strip():
        deps[obj].append(line.strip())
digests = {}
def digest(path):
    if path not in digests:
        try:
            digests[path] = hashlib.sha256(open(path, "rb").read()).hexdigest()
        except OSError:
            digests[path] = "missing"
    return digests[path]
for f in files:
    e = commands.get(f)
    m = re.search(r"(?:^|\s)-o\s+(\S+)", e["command"]) if e else None
    if not m or m.group(1) not in deps:
        print(f, "-")
        continue
    h = hashlib.sha256()
    h.update(version.encode() + config + json.dumps(e, sort_keys=True).encode())
    for d in deps[m.group(1)]:
        path = os.path.normpath(os.path.join(e["directory"], d))
        h.update(path.encode() + b"\0" + digest(path).encode())
    print(f, h.hexdigest())
EOF
}
failed=0
warned=0
cached=0
run_files() {  # run_files fatal|warn FILE...: clang-tidy on each file not cached, $jobs at once
  local kind="$1"
  shift
  [ "$#" -gt 0 ] || return 0
  local todo=() file key
  while read -r file key; do
    if [ "$key" != - ] && [ -e "$cache/$key" ]; then
      cached=$((cached + 1))
    else
      todo+=("$file" "$key")
    fi
  done < <(keys "$@")
  [ "${#todo[@]}" -gt 0 ] || return 0
  # Each file: its own log, and its cache entry when clang-tidy exits 0 and says nothing.
  if ! printf '%s\n' "${todo[@]}" |
      CACHE="$cache" BUILD="$build" TMP="$tmp" xargs -d '\n' -P "$jobs" -n 2 sh -c '
        log="$TMP/$(printf %s "$0" | tr / _).log"
        clang-tidy -p "$BUILD" --quiet "$0" >"$log" 2>&1 || exit 1
        if [ "$1" != - ] && [ "$CACHE" != off ] && ! grep -q "warning:\|error:" "$log"; then
          touch "$CACHE/$1"
        fi'; then
    if [ "$kind" = fatal ]; then failed=1; else warned=1; fi
  fi
  cat "$tmp"/*.log 2>/dev/null | grep -E 'warning:|error:' -A3 | grep -v 'warnings generated' || true
  rm -f "$tmp"/*.log
}
case "$mode" in
  part) echo "tidy: part $part of the tree: ${#fatal[@]} of ${#in_db[@]} files" ;;
  changed) echo "tidy: ${#fatal[@]} changed file(s) since ${base:0:12}" ;;
  *) echo "tidy: $n_changed changed file(s) since ${base:0:12} (fatal), then the $n_rest others of part $part of the tree" ;;
esac
run_files fatal "${fatal[@]}"
run_files warn "${rest[@]}"
echo "tidy: $(( ${#fatal[@]} + ${#rest[@]} )) of ${#in_db[@]} files checked in $(( $(date +%s) - start ))s ($cached of them clean in the cache)"
if [ "$warned" != 0 ]; then
  echo "tidy: findings above in files this branch did not change (not fatal unless BLKBENCH_TIDY_STRICT=1)" >&2
fi
if [ "$failed" != 0 ]; then
  echo "tidy: findings above (fix them, or turn a noisy check off in .clang-tidy with a reason)" >&2
  exit 1
fi
