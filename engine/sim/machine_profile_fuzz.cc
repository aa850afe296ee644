// libFuzzer target: a machine profile carried with a matrix is parsed by the agent's
// engine; any bytes must give a profile or an error, within the YAML limits.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "engine/sim/machine_profile.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const absl::StatusOr<blkbench::engine::MachineProfile> p =
      blkbench::engine::ParseMachineProfile(text, "fuzz.yaml");
  // A profile that parses is usable: its line costs are defined for every CPU pair.
  if (p.ok() && p->cpus() > 0) (void)p->LineTransferNs(0, p->cpus() - 1);
  return 0;
}
