// Simulated devices (sim: classes) as every part of blkbench describes them: the one
// function for their facts — what agents register, what a sim run's result carries, in
// the agent and in `blkbench sim` alike — and their DevicePreparation, which touches no
// hardware.
#ifndef BLKBENCH_AGENT_CELL_SIM_DEVICE_H_
#define BLKBENCH_AGENT_CELL_SIM_DEVICE_H_

#include <string>

#include "agent/cell/cell_runner.h"
#include "blkbench/v1/metrics.pb.h"

namespace blkbench {

// Facts of the simulated device `device_class` ("sim:ssd"): path and class are the class,
// simulated, kSimulatedDeviceBytes large with 512-byte blocks, rotational only for
// sim:hdd, the engine's elevators offered and "none" in effect (the engine models the
// device itself from the cell).
v1::DeviceFacts SimulatedDeviceFacts(const std::string& device_class);

// Prepares nothing: the target is run.device with SimulatedDeviceFacts, and the cell's
// queue settings are the ones applied (the engine applies them itself). Thread-compatible
// and reusable: it holds no state, so one object may serve any number of runs.
class SimulatedDevicePreparation final : public DevicePreparation {
 public:
  // InvalidArgument when run.device is not a sim: class.
  absl::StatusOr<PreparedDevice> Prepare(const CellRun& run) override;
  absl::Status Release() override { return absl::OkStatus(); }
};

}  // namespace blkbench

#endif  // BLKBENCH_AGENT_CELL_SIM_DEVICE_H_
