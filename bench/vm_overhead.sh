#!/usr/bin/env bash
# What a VM test host costs, side by side in one run: the same matrix (randread 4k QD16,
# 1 s runs) with `blkbench run` on a loop device of this host and in qemu guests (an NVMe
# disk offered as the same class) booting the newest Debian 6.1 and 6.12 kernels. Prints
# per setup: wall time, the guest's boot (qemu start -> the guest program's hello), and
# the time each run takes beyond its 1 s runtime (setup, checks, store, teardown; in a
# guest also the channel, and the boot and power-off spread over the runs).
# Usage: bench/vm_overhead.sh [BUILD_DIR] [RUNS] [--write FILE]
#   --write FILE replaces the section between the vm_overhead markers of FILE
#   (docs/performance.md) with the table. Needs root and qemu-system-x86_64.
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build}"
runs="${2:-5}"
write=""
[ "${3:-}" = "--write" ] && write="$4"
blkbench="$build/cli/blkbench"
dir=$(mktemp -d)
loop=""
cleanup() {
  [ -n "$loop" ] && losetup -d "$loop" 2>/dev/null
  rm -rf "$dir" /dev/shm/blkbench-vm-overhead.img
}
trap cleanup EXIT

cat >"$dir/m.yaml" <<EOF
name: vm-overhead
repeats: $runs
job: {rw: randread, bs: 4k, direct: 1, ioengine: io_uring, iodepth: 16, runtime: 1s, time_based: 1}
target: {device_class: ssd}
EOF

truncate -s 1G /dev/shm/blkbench-vm-overhead.img
loop=$(losetup --find --show /dev/shm/blkbench-vm-overhead.img)

now() { date +%s.%N; }
# Seconds from the progress line "... booted in 9.1 s; ..." ("-" when none).
boot_of() { sed -n 's/.* booted in \([0-9.]*\) s.*/\1/p' "$1" | head -1 | grep . || echo "-"; }
row() {  # label, wall, boot, log
  local label=$1 wall=$2 boot=$3
  python3 - "$label" "$wall" "$boot" "$runs" <<'EOF'
import sys
label, wall, boot, runs = sys.argv[1], float(sys.argv[2]), sys.argv[3], int(sys.argv[4])
b = 0.0 if boot == "-" else float(boot)
per = (wall - b) / runs - 1.0
print(f"| {label} | {runs} | {wall:.1f} s | {boot if boot == '-' else boot + ' s'} | {per:.2f} s |")
EOF
}

table="| setup | 1 s runs | wall | boot | per run beyond its runtime |
|---|---:|---:|---:|---:|"
t0=$(now)
"$blkbench" run "$dir/m.yaml" --device "$loop=ssd" --db "$dir/host.db" \
  --state-dir "$dir/state" >/dev/null 2>"$dir/host.log"
t1=$(now)
table+=$'\n'$(row "host, loop device ($(uname -r))" "$(python3 -c "print($t1 - $t0)")" "-")
for k in "deb:6.1.0-*" "deb:linux-image-6.12*"; do
  t0=$(now)
  "$blkbench" run "$dir/m.yaml" --vm nvme:class=ssd --kernel "$k" --db "$dir/vm.db" \
    --state-dir "$dir/state" >/dev/null 2>"$dir/vm.log"
  t1=$(now)
  rel=$(sed -n 's/.*k0: \([^ ]*\) .*booted in.*/\1/p' "$dir/vm.log" | head -1)
  accel=$(grep -o 'booted in [0-9.]* s; [a-z]*' "$dir/vm.log" | head -1 | awk '{print $NF}')
  table+=$'\n'$(row "guest $rel, ${accel:-?}, 2 vCPUs, 2 GiB" "$(python3 -c "print($t1 - $t0)")" "$(boot_of "$dir/vm.log")")
done

summary="Measured $(date -u +%Y-%m-%d) with \`bench/vm_overhead.sh $build $runs\` on $(nproc) cores ($(uname -r), qemu $(qemu-system-x86_64 --version | head -1 | awk '{print $4}'))."
echo "$table"
echo "$summary"
if [ -n "$write" ]; then
  python3 - "$write" "$table" "$summary" <<'EOF'
import re, sys
path, table, summary = sys.argv[1:4]
text = open(path).read()
begin, end = "<!-- vm_overhead:begin -->", "<!-- vm_overhead:end -->"
body = f"{begin}\n{table}\n\n{summary}\n{end}"
if begin in text:
    text = re.sub(re.escape(begin) + ".*?" + re.escape(end), lambda m: body, text, flags=re.S)
else:
    text += "\n" + body + "\n"
open(path, "w").write(text)
EOF
fi
