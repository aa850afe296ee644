// Which devices a cell may run on: the controller's placement rule, shared with the CLI
// so `submit` and `show` can say why a run waits ("no agent offers device class 'nvme'").
#ifndef BLKBENCH_COMMON_PLACEMENT_H_
#define BLKBENCH_COMMON_PLACEMENT_H_

#include <string>
#include <vector>

#include "blkbench/v1/controller.pb.h"

namespace blkbench {

// A cell may run on a device of its class whose kernel release matches the cell's kernel
// glob (fnmatch): the agent host's, or for a device in a VM test host the guest's
// (DeviceFacts.vm.release). Simulated kernels ("sim:6.10+patch") are chosen by the
// engine, so they match any host.
bool DeviceMatches(const v1::CellSpec& cell, const v1::AgentInfo& agent,
                   const v1::DeviceFacts& device);

// The kernel that serves `device`: its VM's release, else the agent host's.
const std::string& DeviceKernelRelease(const v1::AgentInfo& agent, const v1::DeviceFacts& device);

// The kernel half of DeviceMatches: whether a host running `kernel_release` may take a
// cell whose target kernel is `pattern` ("" and simulated kernels match every host).
bool KernelMatches(const std::string& pattern, const std::string& kernel_release);

// Why none of the connected `agents` can ever take `cell`, e.g. "no connected agent
// offers device class 'nvme'" or "no connected agent with a 'ssd' device runs a kernel
// matching '6.9*' (they run 6.1.0-18-amd64)"; "" when some connected agent's device
// matches (the run then waits only for that device to be free). Followed by a line per
// device a connected agent could not offer, with its reason (a VM test host whose kernel
// did not boot, with the guest's console tail).
std::string UnplaceableReason(const v1::CellSpec& cell, const std::vector<v1::AgentInfo>& agents);

}  // namespace blkbench

#endif  // BLKBENCH_COMMON_PLACEMENT_H_
