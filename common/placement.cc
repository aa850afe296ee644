// The placement rule; see placement.h.
#include "common/placement.h"

#include <fnmatch.h>

#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/resolved_job.h"

namespace blkbench {

const std::string& DeviceKernelRelease(const v1::AgentInfo& agent, const v1::DeviceFacts& device) {
  return device.has_vm() ? device.vm().release() : agent.host().kernel_release();
}

bool DeviceMatches(const v1::CellSpec& cell, const v1::AgentInfo& agent,
                   const v1::DeviceFacts& device) {
  if (device.device_class() != cell.target().device_class()) return false;
  return KernelMatches(cell.target().kernel(), DeviceKernelRelease(agent, device));
}

bool KernelMatches(const std::string& pattern, const std::string& kernel_release) {
  if (pattern.empty() || IsSimulated(pattern)) return true;
  return fnmatch(pattern.c_str(), kernel_release.c_str(), 0) == 0;
}

std::string UnplaceableReason(const v1::CellSpec& cell, const std::vector<v1::AgentInfo>& agents) {
  const std::string& cls = cell.target().device_class();
  std::set<std::string> kernels;  // of connected agents offering the class
  for (const v1::AgentInfo& agent : agents) {
    if (!agent.connected()) continue;
    for (const v1::DeviceFacts& d : agent.devices()) {
      if (DeviceMatches(cell, agent, d)) return "";
      if (d.device_class() == cls) kernels.insert(DeviceKernelRelease(agent, d));
    }
  }
  std::string why =
      kernels.empty()
          ? absl::StrCat("no connected agent offers device class '", cls, "'")
          : absl::StrCat("no connected agent with a '", cls, "' device runs a kernel matching '",
                         cell.target().kernel(), "' (they run ", absl::StrJoin(kernels, ", "), ")");
  // What agents could not offer may be what was meant (a VM test host whose kernel did
  // not boot): say so, with the agent's reason.
  for (const v1::AgentInfo& agent : agents) {
    if (!agent.connected()) continue;
    for (const v1::DeviceNotOffered& n : agent.not_offered()) {
      absl::StrAppend(&why, "\n  agent ", agent.agent_id(), " did not offer ", n.path(), ": ",
                      n.reason());
    }
  }
  return why;
}

}  // namespace blkbench
