// RealDevicePreparation: how the agent makes an allowlisted device ready for one run and
// leaves the host as found after it — wrong-disk checks and the O_EXCL hold, the identity
// recorded at registration, queue settings journaled and applied, the cell's cgroup layout
// (journaled too) — as the DevicePreparation of the one cell runner. Its own library
// (blkbench_cell_real): anything that runs a cell on a real device links it, not the agent.
#ifndef BLKBENCH_AGENT_CELL_REAL_DEVICE_H_
#define BLKBENCH_AGENT_CELL_REAL_DEVICE_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "agent/cell/cell_runner.h"
#include "agent/cgroup/cgroup_manager.h"
#include "agent/device/block_trace.h"
#include "agent/device/identity.h"
#include "agent/device/queue_settings.h"
#include "agent/device/safety.h"

namespace blkbench {

// Where the host's kernel interfaces are, for tests and unusual mounts.
struct RealDeviceOptions {
  // tracefs for a cell's `trace: 1` (mounted there if it is not yet; BlockTrace).
  std::string tracefs = "/sys/kernel/tracing";
};

// One object per run (see DevicePreparation); the borrowed objects outlive it and are
// thread-safe, so runs on different devices prepare concurrently.
class RealDevicePreparation final : public DevicePreparation {
 public:
  // run.device must be on `allowlist` (PrepareExclusiveWrite checks it again) with class
  // `device_class`; `identities` holds what registration recorded.
  RealDevicePreparation(std::string device_class, std::vector<AllowlistEntry> allowlist,
                        const DeviceIdentityRegistry& identities, QueueSettingsJournal& journal,
                        CgroupManager& cgroups, RealDeviceOptions options = {});

  // Wrong-disk protection first, before any sysfs write or cgroup: PrepareExclusiveWrite's
  // checks and O_EXCL hold (kept until Release), then, under the hold, the device's identity
  // must be the one recorded at registration. Then the queue settings (originals journaled
  // durably first) and, for a layout other than root, the cell's cgroups named run.name
  // (after the queue settings: bfq's weight files exist once a device runs bfq). The facts
  // are read under the hold, with path = run.device; io_path is the resolved node. Last,
  // for a cell with `trace: 1`, a BlockTrace of the device (a journaled tracefs instance
  // "blkbench-<run.name>"), stopped by `annotate` (its summary goes into
  // RunResult.internals, BlockTraceSummary::Internals) or by Release; a trace needs a
  // block device (FailedPrecondition for a file). Errors:
  // FailedPrecondition "refused: ..." for a device that may not be written (nothing was
  // touched); the failing step's error otherwise, with whatever was applied undone.
  absl::StatusOr<PreparedDevice> Prepare(const CellRun& run) override;

  // Stops the trace if `annotate` did not (a failed or cancelled run), removes the groups
  // (the runner has reaped every job, so they are empty), restores the queue settings,
  // then drops the hold. A trace that could not be stopped cleanly is an error here.
  absl::Status Release() override;

 private:
  absl::Status RestoreQueue();
  // Stops the trace if one runs; its summary, or why there is none.
  absl::StatusOr<BlockTraceSummary> StopTrace();

  const std::string device_class_;
  const std::vector<AllowlistEntry> allowlist_;
  const DeviceIdentityRegistry& identities_;
  QueueSettingsJournal& journal_;
  CgroupManager& cgroups_;
  const RealDeviceOptions options_;
  // Set by a successful Prepare.
  std::optional<ExclusiveHold> hold_;
  v1::DeviceFacts facts_;
  std::unique_ptr<CgroupPlacement> placement_;
  std::unique_ptr<BlockTrace> trace_;
  absl::Status trace_error_;  // a Stop that failed in `annotate`, reported by Release
};

}  // namespace blkbench

#endif  // BLKBENCH_AGENT_CELL_REAL_DEVICE_H_
