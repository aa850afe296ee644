#!/usr/bin/env bash
# Installs what blkbench needs, builds it twice (release with -Werror, and ASan+UBSan),
# and runs every test in both builds, plus the clang-format, include-layer
# (scripts/check_layers.py) and clang-tidy (scripts/tidy.sh) checks, and the fuzz targets
# (scripts/fuzz.sh: corpus replay and 15 s of fuzzing each; longer by hand). Run as root: the
# tests create loop devices and change their queue settings (restored afterwards).
#   scripts/test.sh           all of the above (CI: .ci/run); 1.5-2 h on 2 cores (README.md)
#   scripts/test.sh --quick   the fast lane: the release build (incremental) and the tests
#                             labelled unit (`ctest -L unit -j2`: no root, no guest, no
#                             PostgreSQL); no apt-get, runs as any user who can write the
#                             tree; a few minutes once built (README.md)
# Each stage prints how long it took.
set -euo pipefail
cd "$(dirname "$0")/.."
quick=0
case "${1:-}" in
  --quick) quick=1 ;;
  "") ;;
  *) echo "usage: $0 [--quick]" >&2; exit 2 ;;
esac
stage_start=$SECONDS
stage() {  # stage NAME: ends the previous stage (printing its time) and names the next
  if [ -n "${stage_name:-}" ]; then
    echo "== ${stage_name}: $((SECONDS - stage_start)) s"
  fi
  stage_name="$1"
  stage_start=$SECONDS
  [ -z "$1" ] || echo "== $1"
}

if [ "$quick" = 1 ]; then
  stage "release build (incremental)"
  scripts/build.sh release
  stage "unit tests (release, ctest -L unit)"
  (cd build && ctest --output-on-failure -j2 --timeout 300 -L '^unit$' --output-junit junit-unit.xml)
  stage ""
  python3 scripts/check_skips.py tests/allowed_skips.txt build/junit-unit.xml
  echo "== quick lane passed in ${SECONDS} s (scripts/test.sh without --quick runs everything)"
  exit 0
fi

scripts/deps.sh

stage "clang-format"
files=$(git ls-files '*.cc' '*.h' 2>/dev/null || find . -name '*.cc' -o -name '*.h')
clang-format --dry-run --Werror $files
stage "include layers"
python3 scripts/check_layers.py

stage "release build"
scripts/build.sh release
# The rest of the tree: one tenth of it, the part named by the commit being tested (so a
# commit always checks the same files, and ten commits cover the tree), ~4 min here on a
# cold cache; BLKBENCH_TIDY_PART=1/1 for all of it (~35 min).
if [ -z "${BLKBENCH_TIDY_PART:-}" ]; then
  head=$(git rev-parse --short=8 HEAD 2>/dev/null || echo 0)
  export BLKBENCH_TIDY_PART="$(( (16#$head % 10) + 1 ))/10"
fi
stage "clang-tidy (changed files, fatal; then part $BLKBENCH_TIDY_PART of the rest of the tree)"
scripts/tidy.sh build
stage "release tests"
(cd build && ctest --output-on-failure -j2 --timeout 300 -LE soak --output-junit junit.xml)
stage "skipped tests (release)"
python3 scripts/check_skips.py tests/allowed_skips.txt build/junit.xml

if [ "${BLKBENCH_SKIP_ASAN:-0}" != 1 ]; then
  stage "ASan+UBSan build"
  scripts/build.sh asan
  stage "ASan+UBSan tests"
  # The VM tests (label vm) run here too (the host side is sanitized, qemu and the guest
  # kernel are not), except the end-to-end ones of the blkbench command and the CI script
  # over guests (RunVmTest, CiExampleVmTest: ~4 min of TCG boots for code whose sanitized
  # parts cli_test, vm_host_test and the in-guest tests already run here); they run in
  # the release suite above. So do four long Monte Carlo and simulation runs whose code
  # the sanitized unit tests of the gate and the engine cover with small inputs (9 of the
  # ASan run's 37 CPU-minutes: RobustGate's auto-repeat power, gate-proof's regenerated
  # section, seed 001's two 30 s threads examples).
  (cd build-asan && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ctest --output-on-failure -j2 --timeout 600 -LE soak \
    -E '^(RunVmTest[.]|CiExampleVmTest[.]|RobustGate[.]AutoRepeatReachesNinetyPercentPower$|GateProofCommand[.]RegeneratesTheSectionBetweenItsMarkers$|SeedsTest[.]Seed001On)' \
    --output-junit junit.xml)
  stage "skipped tests (ASan+UBSan)"
  python3 scripts/check_skips.py tests/allowed_skips.txt build-asan/junit.xml
fi
if [ "${BLKBENCH_SKIP_FUZZ:-0}" != 1 ]; then
  stage "fuzzing (scripts/fuzz.sh: corpus replay, then ${BLKBENCH_FUZZ_SECONDS:-15} s per target)"
  scripts/fuzz.sh "${BLKBENCH_FUZZ_SECONDS:-15}"
fi
stage ""
echo "== all tests passed in $((SECONDS / 60)) min"
