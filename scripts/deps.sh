#!/usr/bin/env bash
# Installs blkbench's build and runtime dependencies from Debian 12 packages.
# Idempotent: does nothing (and needs no network) when everything is present.
#   scripts/deps.sh            the toolchain, -dev packages and test tools (to build and test)
#   scripts/deps.sh --runtime  only what the installed binaries need on a test machine or
#                              controller host (the .deb depends on the same libraries)
set -euo pipefail

RUNTIME_PKGS=(
  libgrpc++1.51 libgrpc29 libprotobuf32 libabsl20220623 libsqlite3-0 liburing2
  libaio1 libfyaml0 libprometheus-cpp-core1.0 zlib1g libc-ares2 libre2-9 libssl3
  libblkid1 util-linux libpq5
)

BUILD_PKGS=(
  build-essential cmake ninja-build ccache pkg-config git
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  libabsl-dev libsqlite3-dev sqlite3 liburing-dev libaio-dev libfyaml-dev libcivetweb-dev libblkid-dev
  libpq-dev postgresql
  prometheus-cpp-dev libgtest-dev libgmock-dev googletest libbenchmark-dev
  # libFuzzer targets (scripts/fuzz.sh)
  clang libclang-rt-14-dev
  zlib1g-dev libssl-dev openssl fio prometheus clang-format clang-tidy util-linux e2fsprogs fdisk python3 dpkg-dev groff-base
  # headless rendering of the HTML reports in their tests
  chromium
  # fio's fiologparser_hist.py reads blkbench's histogram logs in cli/fio_logs_test.cc
  python3-pandas
  # the .deb's check (tests/deb_lintian_test.sh)
  lintian
  # VM test hosts (common/vm, docs/vm-hosts.md): qemu, the initramfs's busybox, module
  # decompression and depmod; apt-get download / dpkg -x come with apt and dpkg
  qemu-system-x86 busybox-static xz-utils zstd kmod
  # LoopTest.DeviceMapperHolderIsRefused stacks a dm-linear target with the host's dmsetup
  # (in a VM guest when the host kernel has no device-mapper)
  dmsetup
)

case "${1:-}" in
  --runtime) PKGS=("${RUNTIME_PKGS[@]}") ;;
  "") PKGS=("${BUILD_PKGS[@]}") ;;
  *) echo "usage: $0 [--runtime]" >&2; exit 2 ;;
esac

missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
