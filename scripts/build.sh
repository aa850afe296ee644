#!/usr/bin/env bash
# Configures and builds blkbench. Usage: scripts/build.sh [release|asan] (default release).
# Build trees: build/ (RelWithDebInfo, -Werror) and build-asan/ (ASan+UBSan, -Werror).
set -euo pipefail
cd "$(dirname "$0")/.."
kind="${1:-release}"
jobs="${BLKBENCH_JOBS:-$(nproc)}"
case "$kind" in
  release) dir=build; flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DBLKBENCH_WERROR=ON) ;;
  asan) dir=build-asan; flags=(-DCMAKE_BUILD_TYPE=Debug -DBLKBENCH_WERROR=ON -DBLKBENCH_SANITIZE=ON) ;;
  *) echo "usage: $0 [release|asan]" >&2; exit 2 ;;
esac
export CCACHE_DIR="${CCACHE_DIR:-$HOME/.cache/blkbench-ccache}"
export CCACHE_MAXSIZE="${CCACHE_MAXSIZE:-5G}"
# Relative paths in the cache key: a fresh clone elsewhere (CI) still hits the cache.
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$(pwd)}"
export CCACHE_NOHASHDIR=1
if [ ! -f "$dir/build.ninja" ]; then
  cmake -S . -B "$dir" -G Ninja "${flags[@]}" >/dev/null
fi
ninja -C "$dir" -j "$jobs"
