// Facts about the host an agent runs on (kernel, CPUs, memory), reported at registration and
// stored with every result so runs are reproducible and comparable.
#pragma once

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"
#include "agent/device/sysfs.h"
#include "blkbench/v1/metrics.pb.h"

namespace blkbench {

// Reads hostname, kernel release and version, boot command line, CPU model, online CPU count
// and total memory from procfs and sysfs under `paths`. Never fails: a fact that cannot be
// read is left empty (0 for numbers), since missing facts must not stop an agent.
v1::HostFacts ReadHostFacts(const SystemPaths& paths = SystemPaths());

// Number of CPUs in a kernel CPU list such as "0-3,8,10-11" (cpulist_parse format, used by
// /sys/devices/system/cpu/online). 0 for a malformed list.
uint32_t CountCpuList(absl::string_view list);

}  // namespace blkbench
