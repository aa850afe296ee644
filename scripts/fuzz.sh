#!/usr/bin/env bash
# Builds the libFuzzer targets (clang with ASan+UBSan, build-fuzz/), replays each one's
# checked-in corpus (tests/fuzz/corpus/<target>/, crashers found so far among them) plus
# the project's own files of that kind, then fuzzes each target for SECONDS (default 30;
# 0 replays only). A crash, a sanitizer report, an input that takes over 10 s or a process
# over 2 GiB RSS fails the run; the input is kept in build-fuzz/findings/<target>/.
# Usage: scripts/fuzz.sh [SECONDS] [TARGET...]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-30}"
shift || true
export CCACHE_DIR="${CCACHE_DIR:-$HOME/.cache/blkbench-ccache}"
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$(pwd)}"
export CCACHE_NOHASHDIR=1
if [ ! -f build-fuzz/build.ninja ]; then
  CC=clang CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DBLKBENCH_FUZZ=ON >/dev/null
fi
ninja -C build-fuzz -j "${BLKBENCH_JOBS:-$(nproc)}" fuzzers

# Seeds each target starts from besides its corpus: the project's own files of its kind.
declare -A seeds=(
  [yaml_fuzz]="examples engine/profiles deploy/config"
  [matrix_fuzz]="examples"
  [fio_import_fuzz]=""
  [machine_profile_fuzz]="engine/profiles"
  [agent_config_fuzz]="deploy/config"
  [submit_request_fuzz]=""
  [http_request_fuzz]=""
)
targets=("$@")
[ "${#targets[@]}" -gt 0 ] || targets=(yaml_fuzz matrix_fuzz fio_import_fuzz machine_profile_fuzz
                                       agent_config_fuzz submit_request_fuzz http_request_fuzz)
# submit_request_fuzz takes wire-format requests: the examples, each as one request.
gen=build-fuzz/generated/submit_request_fuzz
mkdir -p "$gen"
python3 - "$gen" <<'PY'
import os, sys
def varint(n):
    out = b""
    while True:
        b = n & 0x7f; n >>= 7
        out += bytes([b | (0x80 if n else 0)])
        if not n: return out
def field(num, data):
    return varint(num << 3 | 2) + varint(len(data)) + data
for root, _, files in os.walk("examples"):
    for f in files:
        if not f.endswith(".yaml"): continue
        text = open(os.path.join(root, f), "rb").read()
        req = field(1, f.encode()) + field(2, text)
        open(os.path.join(sys.argv[1], f + ".pb"), "wb").write(req)
PY

status=0
for t in "${targets[@]}"; do
  bin=$(find build-fuzz -type f -name "$t" -perm -u+x | head -1)
  [ -n "$bin" ] || { echo "fuzz: no binary for $t" >&2; exit 1; }
  corpus="tests/fuzz/corpus/$t"
  mkdir -p "$corpus"
  extra=()
  for d in ${seeds[$t]}; do extra+=("$d"); done
  [ "$t" = submit_request_fuzz ] && extra+=("$gen")
  findings="build-fuzz/findings/$t"
  work="build-fuzz/work/$t"
  rm -rf "$work" && mkdir -p "$findings" "$work"
  opts=(-timeout=10 -rss_limit_mb=2048 -max_len=65536 "-artifact_prefix=$findings/")
  echo "== fuzz $t: replay $corpus ${extra[*]}"
  if ! "$bin" "${opts[@]}" -runs=0 "$work" "$corpus" "${extra[@]}" >"$findings/replay.log" 2>&1; then
    tail -40 "$findings/replay.log"; status=1; continue
  fi
  grep -E "INITED|DONE" "$findings/replay.log" | tail -1 || true
  if [ "$seconds" -gt 0 ]; then
    echo "== fuzz $t: ${seconds}s"
    if ! "$bin" "${opts[@]}" -max_total_time="$seconds" -print_final_stats=1 "$work" "$corpus" \
         "${extra[@]}" >"$findings/fuzz.log" 2>&1; then
      tail -40 "$findings/fuzz.log"; status=1; continue
    fi
    grep -E "stat::number_of_executed_units|stat::peak_rss_mb" "$findings/fuzz.log" | tr '\n' ' '
    echo
  fi
done
exit "$status"
