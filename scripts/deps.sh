#!/usr/bin/env bash
# Installs blkbench's build and runtime dependencies from Debian 12 packages.
# Idempotent: does nothing (and needs no network) when everything is present.
set -euo pipefail

PKGS=(
  build-essential cmake ninja-build ccache pkg-config git
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  libabsl-dev libsqlite3-dev sqlite3 liburing-dev libyaml-cpp-dev libcivetweb-dev
  prometheus-cpp-dev libgtest-dev libgmock-dev googletest libbenchmark-dev
  zlib1g-dev fio prometheus clang-format util-linux e2fsprogs fdisk python3
)

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
