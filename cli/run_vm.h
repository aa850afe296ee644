// `blkbench run FILE --vm KIND[:SPEC] --kernel SPEC`: the guests a daemon-less run boots
// (one VM test host per --kernel, each with every --vm device; agent/vm/vm_hosts.h) and
// the matrix over their kernels. The booting is RunOnDevices'.
#ifndef BLKBENCH_CLI_RUN_VM_H_
#define BLKBENCH_CLI_RUN_VM_H_

#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "agent/config.h"
#include "agent/run_executor.h"
#include "workloads/matrix.h"

namespace blkbench {

// The --vm KINDs, in the order they are listed in messages.
inline constexpr const char* kVmKinds[] = {"null_blk", "nvme", "hdd", "virtio"};

// Said under the results whenever a run was in a guest without KVM.
inline constexpr char kTcgCaveat[] =
    "note: runs marked 'tcg' ran in QEMU guests without KVM: their timings are emulated by "
    "QEMU's TCG, not hardware timings; compare kernels only against each other on the same "
    "host.";

struct RunVmFlags {
  std::vector<std::string> vms;      // --vm KIND[:KEY=VALUE,...], in order
  std::vector<std::string> kernels;  // --kernel SPEC, in order
  std::string vcpus;                 // --vcpus N; "": 2
  std::string memory;                // --memory SIZE; "": 2g
  bool any() const { return !vms.empty() || !kernels.empty() || !vcpus.empty() || !memory.empty(); }
};

// The VM test hosts the flags ask for: host k<i> boots kernels[i] (vm::ParseKernelSpec's
// syntax) with every --vm device, named vm:k<i>/<guest kernel name> and vm:k<i>/null_blk.
// A --vm is a KIND with optional comma-separated KEY=VALUE pairs:
//   null_blk                     a null_blk device made in the guest per run from the
//                                cell's device: null_blk: keys (no keys of its own)
//   nvme[:size=S,queues=Q,class=C]   an NVMe disk (size default 1g, at least 1m; queues
//   virtio[:size=S,queues=Q,class=C] 0..64, 0 = qemu's default); a virtio-blk disk
//   hdd[:size=S,class=C]         a rotational SCSI disk
// `class` is the device class the disk is offered as (default: the kind). --vcpus is
// 1..64, --memory 256m..64g. InvalidArgument naming the flag (and the key and the keys it
// takes) for an unknown kind or key, a bad value, a kernel spec that does not parse or
// names a bzImage that cannot be read, the same kernel twice, two null_blk, --vm without
// --kernel and the other way round.
absl::StatusOr<std::vector<VmHostConfig>> VmHostsFromFlags(const RunVmFlags& flags);

// The device classes a host's devices are offered as, in its order of devices.
std::vector<std::string> VmDeviceClasses(const VmHostConfig& host);

// One line per cell of `m` whose device class none of `classes` is ("" when there is
// none): what it targets, what the --vm devices provide, how to give it a device.
std::string CellsWithoutVmClass(const workloads::Matrix& m, const std::string& path,
                                const std::vector<std::string>& classes);

// The matrix to run on guests with `releases` (their uname -r, in --kernel order). With
// two or more and no `kernel` axis in `m`, every cell runs once per release its
// target.kernel glob matches ("" matches all): `kernel` becomes the first (slowest) axis,
// its value and the cell's target.kernel the exact release, so `blkbench gate --axis
// kernel --baseline R1 --candidate R2` pairs each cell with its twin on the other kernel.
// A cell that matches none is kept as written (placement then says why it cannot run).
// Otherwise `m` itself: one kernel, or a kernel axis whose globs are matched as written.
workloads::Matrix WithKernelAxis(const workloads::Matrix& m,
                                 const std::vector<std::string>& releases);

// The kernel release each guest booted, in host (--kernel) order, each said on
// `progress` ("<who>k0: <release> (--kernel SPEC) booted in 9.1 s; tcg, ..."); "" for a
// guest that offered nothing.
std::vector<std::string> GuestReleases(const std::vector<VmHostConfig>& hosts,
                                       const DeviceOffer& offer, std::ostream& progress,
                                       const std::string& who);

// The --kernel a device path "vm:<host>[/...]" came from, as " (--kernel SPEC)"; "" for
// any other path.
std::string KernelOf(const std::vector<VmHostConfig>& hosts, absl::string_view path);

}  // namespace blkbench

#endif  // BLKBENCH_CLI_RUN_VM_H_
