// The initramfs of a VM test host: busybox, /init (init_script.h) and the modules that
// mounting the host's root over 9p needs, built per kernel and cached.
#ifndef BLKBENCH_COMMON_VM_INITRAMFS_H_
#define BLKBENCH_COMMON_VM_INITRAMFS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/vm/boot_modules.h"
#include "common/vm/kernel.h"

namespace blkbench::vm {

inline constexpr char kDefaultBusybox[] = "/bin/busybox";  // Debian's busybox-static

// The modules /init loads (those built into the kernel are skipped): virtio PCI, the
// virtio console (for the channel's virtio-serial port), 9p over virtio, configfs (to
// mount it before null_blk needs it) and overlayfs (/lib/modules on a host without one).
std::vector<WantedModule> BootModules();

// Builds the initramfs for `kernel` into `cache_dir`/initramfs/<key>.cpio and returns its
// path; the key is a digest of everything that goes in (kernel image, modules.dep,
// busybox, the init script), so an existing file is reused and a change builds a new
// one. Modules are decompressed on the host (xz -dc, zstd -dc, gzip -dc) for busybox's
// insmod. Errors: FailedPrecondition when busybox is missing, NotFound
// naming the kernel and module when a required module is missing, Internal from xz.
absl::StatusOr<std::string> BuildInitramfs(const Kernel& kernel, const std::string& cache_dir,
                                           const std::string& busybox = kDefaultBusybox);

}  // namespace blkbench::vm

#endif  // BLKBENCH_COMMON_VM_INITRAMFS_H_
