// The qemu side of a VM test host: accelerator choice, qemu's version, and the command
// line built from a VmConfig (no shell: an argv).
#ifndef BLKBENCH_COMMON_VM_QEMU_H_
#define BLKBENCH_COMMON_VM_QEMU_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/vm/vm_config.h"

namespace blkbench::vm {

// kvm or tcg for `accel`. kAuto: kvm when /dev/kvm opens read-write and no KVM guest of
// this process has failed (MarkKvmUnusable). FailedPrecondition when kKvm is asked for
// and /dev/kvm cannot be used.
absl::StatusOr<Accel> ResolveAccel(Accel accel);
// From now on kAuto resolves to tcg: a KVM guest failed with qemu's "KVM internal error"
// (a /dev/kvm that opens but cannot run a guest, as under some nested hypervisors). For
// this process, and until the host reboots for every process that can read
// kKvmUnusableMarker (written when this one may: root). Thread-safe; logged once.
void MarkKvmUnusable(absl::string_view why);
// On tmpfs: gone at the next boot. Remove it to let kAuto try KVM again.
inline constexpr absl::string_view kKvmUnusableMarker = "/run/blkbench-kvm-unusable";
// The text qemu prints when KVM cannot go on running a guest.
inline constexpr absl::string_view kKvmInternalError = "KVM internal error";
const char* AccelName(Accel resolved);

// "7.2.22" from `qemu --version`. NotFound when qemu is not installed.
absl::StatusOr<std::string> QemuVersion(const std::string& qemu);

// InvalidArgument naming the field when a config cannot make a VM (paths with
// whitespace that the kernel command line would split, bad serials, zero sizes...).
absl::Status ValidateVmConfig(const VmConfig& config);

// Whether `word` may be added to the guest kernel's command line: one word of printable
// characters without quotes, not one of blkbench's own (blkbench.*, console=, panic=,
// rdinit=, init=). InvalidArgument saying why.
absl::Status CheckKernelArgument(absl::string_view word);

// The modules the guest program modprobes for the config's disks (nvme, virtio_scsi +
// sd_mod, virtio_blk), each once.
std::vector<std::string> DiskModules(const VmConfig& config);

// Files of one VM, all inside its directory.
struct VmFiles {
  std::string dir;
  std::string console;  // the serial console's log
  std::string socket;   // the channel's Unix socket (we listen, qemu connects)
  std::vector<std::string> disks;
};
VmFiles FilesIn(const std::string& dir, const VmConfig& config);

// The 9p mount tag of the host's root.
inline constexpr char kRootTag[] = "blkbench_root";
// The virtio-serial port name the guest program looks for.
inline constexpr char kChannelPort[] = "blkbench.0";

// The full argv (qemu first). Requires a validated config and a resolved accelerator.
std::vector<std::string> QemuArgv(const VmConfig& config, Accel resolved, const VmFiles& files);

}  // namespace blkbench::vm

#endif  // BLKBENCH_COMMON_VM_QEMU_H_
