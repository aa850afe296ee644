#!/usr/bin/env bash
# Builds the .deb from a built tree (cmake/install.cmake: what goes in it) and prints its
# path. With --lintian, then runs lintian on it and fails on any error or warning.
# Usage: scripts/package.sh [--lintian] [BUILD_DIR [OUT_DIR]]
#   BUILD_DIR  a configured and built tree (default build/, from scripts/build.sh release)
#   OUT_DIR    where the .deb goes (default BUILD_DIR/package)
set -euo pipefail
lint=0
if [ "${1:-}" = --lintian ]; then lint=1; shift; fi
build=$(cd "${1:-$(dirname "$0")/../build}" && pwd)
out=$(mkdir -p "${2:-$build/package}" && cd "${2:-$build/package}" && pwd)
[ -f "$build/CPackConfig.cmake" ] || { echo "package: $build is not a configured build tree" >&2; exit 2; }
# cpack installs what the build made; it does not build (ninja -C BUILD_DIR first).
(cd "$build" && cpack -G DEB -B "$out" >&2)
deb=$(ls -t "$out"/blkbench_*.deb | head -n 1)
if [ "$lint" = 1 ]; then
  # --fail-on error,warning: info and pedantic tags are reported, not fatal.
  lintian --fail-on error,warning "$deb" >&2
fi
echo "$deb"
