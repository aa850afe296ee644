// Simulated devices' facts and preparation; see sim_device.h.
#include "agent/cell/sim_device.h"

#include "absl/strings/str_cat.h"
#include "common/resolved_job.h"
#include "common/sim_vocabulary.h"
#include "engine/model/engine_runner.h"

namespace blkbench {

v1::DeviceFacts SimulatedDeviceFacts(const std::string& device_class) {
  v1::DeviceFacts f;
  f.set_path(device_class);
  f.set_device_class(device_class);
  f.set_simulated(true);
  f.set_size_bytes(kSimulatedDeviceBytes);
  f.set_logical_block_size(512);
  f.set_physical_block_size(512);
  const SimDeviceDef* def = FindSimDevice(device_class);
  f.set_rotational(def != nullptr && def->rotational);
  f.set_model("blkbench engine");
  for (std::string_view s : Schedulers()) f.add_schedulers(std::string(s));
  f.mutable_queue()->set_scheduler("none");
  return f;
}

absl::StatusOr<PreparedDevice> SimulatedDevicePreparation::Prepare(const CellRun& run) {
  if (!IsSimulated(run.device)) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", run.device, "' is not a simulated device class (sim:...)"));
  }
  PreparedDevice d;
  d.io_path = run.device;
  d.facts = SimulatedDeviceFacts(run.device);
  d.applied = run.cell.queue();
  return d;
}

}  // namespace blkbench
