#!/usr/bin/env bash
# The .deb against Debian's rules: scripts/package.sh --lintian builds it from the build
# tree and fails on any lintian error or warning; then what lintian does not know about
# this package: the conffile skeleton, the maintainer scripts' promises (reload systemd,
# enable and start nothing), a changelog entry for the package's version, a man page for
# every binary.
# Usage: deb_lintian_test.sh BUILD_DIR SOURCE_DIR      (exit 77: skipped, lintian absent)
set -euo pipefail
build=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
if ! command -v lintian >/dev/null; then
  # The form scripts/check_skips.py reads a skip's reason from.
  printf '%s: Skipped\nlintian is absent: apt-get install lintian (scripts/deps.sh installs it)\n' "$0"
  exit 77
fi
tmp=$(mktemp -d /tmp/blkbench_deb_lintian_test.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# 1. lintian: no error, no warning (its output is in the test's log either way).
deb=$("$src/scripts/package.sh" --lintian "$build" "$tmp/package") \
  || fail "lintian found errors or warnings (above)"

# 2. The conffile skeleton: /etc/blkbench/agent.yaml, every setting commented out.
dpkg-deb -e "$deb" "$tmp/control"
dpkg-deb -x "$deb" "$tmp/root"
[ "$(cat "$tmp/control/conffiles")" = /etc/blkbench/agent.yaml ] \
  || fail "conffiles: $(cat "$tmp/control/conffiles")"
[ -f "$tmp/root/etc/blkbench/agent.yaml" ] || fail "no /etc/blkbench/agent.yaml"
if grep -v -E '^(#|$)' "$tmp/root/etc/blkbench/agent.yaml"; then
  fail "/etc/blkbench/agent.yaml sets something (above): every setting should be commented out"
fi
grep -q '^# devices:' "$tmp/root/etc/blkbench/agent.yaml" || fail "the skeleton lacks devices:"

# 3. Maintainer scripts: systemd reloaded when it runs; nothing enabled or started.
for s in postinst postrm; do
  [ -x "$tmp/control/$s" ] || fail "no executable $s"
  grep -q '\[ -d /run/systemd/system \]' "$tmp/control/$s" || fail "$s: no systemd guard"
  grep -q 'systemctl --system daemon-reload' "$tmp/control/$s" || fail "$s: no daemon-reload"
done
[ -x "$tmp/control/prerm" ] || fail "no executable prerm"
if grep -h -v '^#' "$tmp/control/postinst" "$tmp/control/prerm" "$tmp/control/postrm" |
   grep -E 'enable|(invoke|systemctl)[^#]* (re)?start|unmask'; then
  fail "a maintainer script enables or starts a service (above)"
fi
# Run postinst as dpkg would, with a systemctl that records its calls and systemd said to
# be running only where the guard looks: the one call is daemon-reload.
mkdir -p "$tmp/fakebin"
printf '#!/bin/sh\necho "$*" >> %s/calls\n' "$tmp" > "$tmp/fakebin/systemctl"
chmod +x "$tmp/fakebin/systemctl"
sed 's|/run/systemd/system|'"$tmp"'|' "$tmp/control/postinst" > "$tmp/postinst"
PATH="$tmp/fakebin:$PATH" sh "$tmp/postinst" configure "" || fail "postinst configure failed"
[ "$(cat "$tmp/calls")" = "--system daemon-reload" ] || fail "postinst ran: $(cat "$tmp/calls")"

# 4. The changelog's newest entry is this version; a man page for every binary.
version=$(dpkg-deb -f "$deb" Version)
logged=$(zcat "$tmp/root/usr/share/doc/blkbench/changelog.gz" | dpkg-parsechangelog -l - -S Version)
[ "$logged" = "$version" ] || fail "changelog's newest entry is $logged, the package is $version"
for bin in "$tmp"/root/usr/bin/*; do
  name=$(basename "$bin")
  ls "$tmp"/root/usr/share/man/man[18]/"$name".[18].gz >/dev/null 2>&1 || fail "no man page for $name"
done
# The daemons' pages list exactly the flags their --help lists (and --help, --version;
# absl's --help exits 1).
for daemon in blkbench-agent blkbench-controller; do
  helped=$({ "$tmp/root/usr/bin/$daemon" --help 2>&1 || true; } | sed -n 's/^    --\([a-z_]*\).*/\1/p' | sort)
  paged=$(zcat "$tmp/root/usr/share/man/man8/$daemon.8.gz" | sed -n 's/^\.B \\-\\-\([a-z_]*\).*/\1/p' |
          grep -v -x -e help -e version | sort)
  [ -n "$helped" ] && [ "$helped" = "$paged" ] \
    || fail "$daemon(8) lists $(echo $paged), --help lists $(echo $helped)"
done
echo "deb lintian test passed: $(basename "$deb") is lintian-clean (errors and warnings)"
