// Label values describing a run, shared by the exporter's series and the results API
// rows, so dashboards can join live metrics and stored results on the same values.
#ifndef BLKBENCH_COMMON_METRICS_RUN_LABELS_H_
#define BLKBENCH_COMMON_METRICS_RUN_LABELS_H_

#include <string>

#include "blkbench/v1/metrics.pb.h"
#include "blkbench/v1/workload.pb.h"

namespace blkbench {

struct KernelLabels {
  std::string kernel;   // "sim:6.16+dd-batch-dispatch", or the host's release "6.12.0-1"
  std::string profile;  // engine runs: the kernel profile ("6.16"); "" for real runs
  std::string patches;  // engine runs: "dd-batch-dispatch" ("+"-joined) or "none"; ""
};

// An engine run ("sim:" kernel) is described by the cell's kernel; a real run by the
// release of the host it ran on (`host_kernel`; the cell's glob, or "any", when unknown).
KernelLabels KernelOf(const v1::CellSpec& cell, const std::string& host_kernel);

// How the device a run used was virtualised: "tcg" or "kvm" for a VM test host's device
// (DeviceFacts.vm.accel), "" for bare metal and the engine.
const std::string& VirtOf(const v1::DeviceFacts& device);

// Where the kernel a run ran on came from: "engine" for a sim: cell, "deb:<package>" or
// "image sha256:<first 12 hex digits>" for a VM test host's guest (DeviceFacts.vm),
// "host" for the kernel the agent's machine booted.
std::string KernelSourceOf(const v1::CellSpec& cell, const v1::DeviceFacts& device);

// Said wherever results from a TCG guest are shown (results, report, gate): its timings
// are QEMU's instruction emulation, not a machine's.
inline constexpr char kTcgCaveat[] =
    "ran in a VM test host under TCG (QEMU's CPU emulation, no KVM): its timings are "
    "emulated, not hardware timings; compare such runs only with each other, on the same "
    "host, and repeat on KVM or bare metal before trusting a speed";

// The cell's label (workloads::CellLabel) without the `axis` entry, e.g. "bs=4k" for
// "kernel=sim:6.16 bs=4k" and axis "kernel": cells compared across that axis match on it.
std::string CellLabelWithout(const v1::CellSpec& cell, const std::string& axis);

// The scheduler the cell asks for; "default" when it leaves the device's own.
std::string SchedulerOf(const v1::CellSpec& cell);

}  // namespace blkbench

#endif  // BLKBENCH_COMMON_METRICS_RUN_LABELS_H_
