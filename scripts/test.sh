#!/usr/bin/env bash
# Installs what blkbench needs, builds it twice (release with -Werror, and ASan+UBSan),
# and runs every test in both builds, plus the clang-format, include-layer
# (scripts/check_layers.py) and clang-tidy (scripts/tidy.sh) checks, and the fuzz targets
# (scripts/fuzz.sh: corpus replay and 15 s of fuzzing each; longer by hand). Run as root: the
# tests create loop devices and change their queue settings (restored afterwards).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh

echo "== clang-format"
files=$(git ls-files '*.cc' '*.h' 2>/dev/null || find . -name '*.cc' -o -name '*.h')
clang-format --dry-run --Werror $files
echo "== include layers"
python3 scripts/check_layers.py

echo "== release build"
scripts/build.sh release
echo "== clang-tidy (changed files, then others for BLKBENCH_TIDY_BUDGET seconds)"
BLKBENCH_TIDY_BUDGET="${BLKBENCH_TIDY_BUDGET:-300}" scripts/tidy.sh build
echo "== release tests"
(cd build && ctest --output-on-failure -j2 --timeout 300 -LE soak --output-junit junit.xml)
echo "== skipped tests (release)"
python3 scripts/check_skips.py tests/allowed_skips.txt build/junit.xml

if [ "${BLKBENCH_SKIP_ASAN:-0}" != 1 ]; then
  echo "== ASan+UBSan build"
  scripts/build.sh asan
  echo "== ASan+UBSan tests"
  # The VM tests (label vm) run here too (the host side is sanitized, qemu and the guest
  # kernel are not), except the end-to-end ones of the blkbench command and the CI script
  # over guests (RunVmTest, CiExampleVmTest: ~4 min of TCG boots for code whose sanitized
  # parts cli_test, vm_host_test and the in-guest tests already run here); they run in
  # the release suite above.
  (cd build-asan && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ctest --output-on-failure -j2 --timeout 600 -LE soak \
    -E '^(RunVmTest|CiExampleVmTest)[.]' --output-junit junit.xml)
  echo "== skipped tests (ASan+UBSan)"
  python3 scripts/check_skips.py tests/allowed_skips.txt build-asan/junit.xml
fi
if [ "${BLKBENCH_SKIP_FUZZ:-0}" != 1 ]; then
  echo "== fuzzing (scripts/fuzz.sh: corpus replay, then ${BLKBENCH_FUZZ_SECONDS:-15} s per target)"
  scripts/fuzz.sh "${BLKBENCH_FUZZ_SECONDS:-15}"
fi
echo "== all tests passed"
