// The /init of a VM test host's initramfs (a busybox sh script), and the kernel command
// line parameters it reads.
#ifndef BLKBENCH_COMMON_VM_INIT_SCRIPT_H_
#define BLKBENCH_COMMON_VM_INIT_SCRIPT_H_

namespace blkbench::vm {

// What /init does, in order: mounts /proc, /sys, /dev; insmods /modules/*.ko (sorted:
// the initramfs names them NN-name.ko in load order); mounts the host's / read-only over
// 9p (tag blkbench.root=) at /newroot with fresh proc, sysfs, devtmpfs, devpts, tmpfs on
// /tmp, /run, /var/tmp and /dev/shm, cgroup2, configfs, tracefs and debugfs where the
// kernel has them; makes the kernel's modules dir (host path blkbench.modules_dir=, seen
// through 9p) appear at /lib/modules/<release> (tmpfs over /lib/modules, or an overlay on
// the directory /lib points to when the host has no /lib/modules) so modprobe works; then
// runs blkbench.guest= chrooted into /newroot. Any failure, or the guest program exiting,
// prints "blkbench-init: ..." on the console and powers off at once.
extern const char kInitScript[];

// Kernel command line keys (read from /proc/cmdline; dotted, so the kernel ignores them).
inline constexpr char kCmdlineGuest[] = "blkbench.guest";
inline constexpr char kCmdlineRootTag[] = "blkbench.root";
inline constexpr char kCmdlineModulesDir[] = "blkbench.modules_dir";
// Read by the guest program: modules to modprobe before hello, disks to wait for.
inline constexpr char kCmdlineLoad[] = "blkbench.load";
inline constexpr char kCmdlineDisks[] = "blkbench.disks";
inline constexpr char kCmdlineDiskWaitMs[] = "blkbench.disk_wait_ms";

}  // namespace blkbench::vm

#endif  // BLKBENCH_COMMON_VM_INIT_SCRIPT_H_
