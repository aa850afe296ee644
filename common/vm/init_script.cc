// The initramfs /init script (see init_script.h for what it does and why).
#include "common/vm/init_script.h"

namespace blkbench::vm {

const char kInitScript[] = R"INIT(#!/bin/busybox sh
# blkbench VM test host init (common/vm/init_script.cc). Generated; do not edit.
/bin/busybox --install -s /bin
export PATH=/bin
fail() {
  echo "blkbench-init: FAILED: $*"
  sync
  poweroff -f
  echo c > /proc/sysrq-trigger
}
mount -t proc proc /proc || fail "mount /proc"
mount -t sysfs sysfs /sys || fail "mount /sys"
mount -t devtmpfs devtmpfs /dev || fail "mount /dev"
arg() {
  for w in $(cat /proc/cmdline); do
    case "$w" in "$1="*) echo "${w#*=}" ;; esac
  done
}
guest=$(arg blkbench.guest)
tag=$(arg blkbench.root)
moddir=$(arg blkbench.modules_dir)
[ -n "$guest" ] || fail "no blkbench.guest= on the kernel command line"
[ -n "$tag" ] || fail "no blkbench.root= on the kernel command line"
for m in /modules/*.ko; do
  [ -e "$m" ] || continue
  insmod "$m" || fail "insmod $m"
done
R=/newroot
mount -t 9p -o ro,trans=virtio,version=9p2000.L,msize=262144,cache=loose "$tag" $R ||
  fail "mount the host root (9p tag $tag)"
mount -t proc proc $R/proc || fail "mount $R/proc"
mount -t sysfs sysfs $R/sys || fail "mount $R/sys"
mount -t devtmpfs devtmpfs $R/dev || fail "mount $R/dev"
mkdir -p $R/dev/pts $R/dev/shm
mount -t devpts devpts $R/dev/pts || fail "mount $R/dev/pts"
mount -t tmpfs -o mode=1777 tmpfs $R/dev/shm || fail "mount $R/dev/shm"
for d in tmp var/tmp; do
  mount -t tmpfs -o mode=1777 tmpfs $R/$d || fail "mount tmpfs on /$d"
done
mount -t tmpfs -o mode=0755 tmpfs $R/run || fail "mount tmpfs on /run"
mount -t cgroup2 cgroup2 $R/sys/fs/cgroup || echo "blkbench-init: no cgroup2"
[ -d $R/sys/kernel/config ] && mount -t configfs configfs $R/sys/kernel/config
[ -d $R/sys/kernel/tracing ] && mount -t tracefs tracefs $R/sys/kernel/tracing
[ -d $R/sys/kernel/debug ] && mount -t debugfs debugfs $R/sys/kernel/debug
if [ -n "$moddir" ]; then
  rel=$(uname -r)
  mkdir -p /kmod
  mount --bind "$R$moddir" /kmod || fail "modules dir $moddir not visible over 9p"
  if [ -d $R/lib/modules ]; then
    mount -t tmpfs -o mode=0755 tmpfs $R/lib/modules || fail "tmpfs on /lib/modules"
  else
    # No mount point on the read-only host root: an overlay on the lib dir adds one.
    lib=$R/lib
    t=$(readlink $R/lib) && case "$t" in /*) lib=$R$t ;; *) lib=$R/$t ;; esac
    mkdir -p /ovl && mount -t tmpfs tmpfs /ovl && mkdir /ovl/upper /ovl/work ||
      fail "tmpfs for the /lib overlay"
    mount -t overlay -o lowerdir=$lib,upperdir=/ovl/upper,workdir=/ovl/work overlay $lib ||
      fail "overlay on $lib (for /lib/modules)"
    mkdir $R/lib/modules || fail "mkdir /lib/modules"
  fi
  mkdir -p $R/lib/modules/$rel && mount --bind /kmod $R/lib/modules/$rel ||
    fail "bind the modules onto /lib/modules/$rel"
fi
echo "blkbench-init: starting $guest"
cd $R
chroot $R "$guest"
fail "guest program $guest exited with status $?"
)INIT";

}  // namespace blkbench::vm
