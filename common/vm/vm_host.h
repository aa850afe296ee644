// The one way to turn "this kernel, this shape" into a bootable VmConfig: the agent's VM
// test hosts, `blkbench run --vm` and the tests that run in guests all go through it.
//
//   VmHostSpec spec;
//   spec.kernel = "deb:6.12*";
//   spec.disks = {{VmDisk::Kind::kNvme}};
//   absl::StatusOr<VmConfig> c = PrepareVm(spec);  // kernel fetched, initramfs built
//   absl::StatusOr<std::unique_ptr<Guest>> g = Guest::Boot(*c, absl::Minutes(3));
#ifndef BLKBENCH_COMMON_VM_VM_HOST_H_
#define BLKBENCH_COMMON_VM_VM_HOST_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/vm/vm_config.h"

namespace blkbench::vm {

struct VmHostSpec {
  std::string kernel;  // a kernel spec (kernel.h): deb:PATTERN or PATH/bzImage[:MODULES]
  int vcpus = 2;
  int memory_mb = 2048;
  std::vector<VmDisk> disks;
  Accel accel = Accel::kAuto;
  std::string cache_dir;             // kernels and initramfs; "" = DefaultKernelCacheDir()
  std::string work_parent = "/tmp";  // where each VM's directory is made
  std::vector<std::string> cmdline;  // kernel arguments added to blkbench's own
};

// $BLKBENCH_KERNEL_CACHE, else $HOME/.cache/blkbench-kernels, else kDefaultKernelCache:
// one cache shared by the agent, the CLI and the tests of a user.
std::string DefaultKernelCacheDir();

// The absolute path of a blkbench program that runs inside guests (blkbench-vm-guest,
// blkbench-vm-cell): $BLKBENCH_<NAME> (upper case, '-' as '_'), else next to the running
// executable, else where this build put it. NotFound naming every place looked at.
absl::StatusOr<std::string> FindVmProgram(absl::string_view name);

// Resolves and fetches the kernel (GetKernel), builds its initramfs (BuildInitramfs) and
// fills a VmConfig with the guest program and the spec's shape. Errors are theirs,
// prefixed with the spec.
absl::StatusOr<VmConfig> PrepareVm(const VmHostSpec& spec);

}  // namespace blkbench::vm

#endif  // BLKBENCH_COMMON_VM_VM_HOST_H_
