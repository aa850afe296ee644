// The agent's runner choice; see runners.h.
#include "agent/runners.h"

#include "agent/executor/executor.h"
#include "common/resolved_job.h"
#include "engine/model/config.h"
#include "engine/model/engine_runner.h"
#include "engine/sim/machine_profile.h"

namespace blkbench {

RunnerFactory DefaultRunnerFactory() {
  return [](const std::string& device_class) -> std::unique_ptr<Runner> {
    if (IsSimulated(device_class)) return engine::NewEngineRunner();
    return NewIoExecutor();
  };
}

absl::Status CheckSimulatedDevicesRunnable() {
  return engine::LoadMachineProfile(engine::EngineConfig().machine).status();
}

}  // namespace blkbench
