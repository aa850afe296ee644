// NullBlkDevicePreparation: a cell on the agent's per-run null_blk device. Prepare makes
// a fresh /dev/nullb<N> with the cell's `device: {null_blk: {...}}` parameters through
// NullBlkProvisioner (journaled before the first mkdir, so RecoverAll removes it after a
// crash), then prepares it as any allowlisted device (RealDevicePreparation: the hold,
// queue settings, cgroups, `trace:`); Release undoes that and removes the device, after
// a success, a failure or a cancel alike.
#ifndef BLKBENCH_AGENT_CELL_NULL_BLK_DEVICE_H_
#define BLKBENCH_AGENT_CELL_NULL_BLK_DEVICE_H_

#include <map>
#include <memory>
#include <optional>
#include <string>

#include "absl/time/time.h"
#include "agent/cell/real_device.h"
#include "agent/device/null_blk.h"

namespace blkbench {

// The cell's null_blk attributes: its "null_blk.<attr>" device parameters without the
// prefix (other families' parameters are the engine's and are left out).
std::map<std::string, std::string> NullBlkParamsOf(const v1::CellSpec& cell);

// One object per run; the borrowed objects outlive it.
class NullBlkDevicePreparation final : public DevicePreparation {
 public:
  NullBlkDevicePreparation(NullBlkPaths paths, ConfigfsOps& configfs, QueueSettingsJournal& journal,
                           CgroupManager& cgroups, RealDeviceOptions options = {},
                           absl::Duration node_timeout = absl::Seconds(10));

  // The configfs item is named "blkbench-<run.name>"; the result's device facts are the
  // new /dev/nullb<N>'s, class null_blk. Errors: the provisioner's (an attribute the
  // kernel refused, power-on refused, no device node) or the device preparation's, with
  // the device removed again.
  absl::StatusOr<PreparedDevice> Prepare(const CellRun& run) override;

  // The device's preparation undone (RealDevicePreparation::Release), then the device
  // powered off and removed; the error names each step that failed.
  absl::Status Release() override;

 private:
  NullBlkPaths paths_;
  ConfigfsOps& configfs_;
  QueueSettingsJournal& journal_;
  CgroupManager& cgroups_;
  const RealDeviceOptions options_;
  NullBlkProvisioner provisioner_;
  // Set by a successful Prepare: the device made for this run, recorded as it was made.
  std::optional<NullBlkDevice> device_;
  DeviceIdentityRegistry identities_;
  std::unique_ptr<RealDevicePreparation> real_;
};

}  // namespace blkbench

#endif  // BLKBENCH_AGENT_CELL_NULL_BLK_DEVICE_H_
