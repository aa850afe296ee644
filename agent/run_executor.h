// RunExecutor: carries out one run assignment on one allowlisted or simulated device
// through the one cell runner (agent/cell/cell_runner.h) — for a real device with
// RealDevicePreparation (safety checks, exclusive hold, queue settings applied and
// journaled, the cell's cgroup layout built, the host restored) — without knowing
// anything about the controller connection.
#ifndef BLKBENCH_AGENT_RUN_EXECUTOR_H_
#define BLKBENCH_AGENT_RUN_EXECUTOR_H_

#include <atomic>
#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "agent/cgroup/cgroup_manager.h"
#include "agent/config.h"
#include "agent/device/identity.h"
#include "agent/device/null_blk.h"
#include "agent/device/queue_settings.h"
#include "agent/vm/vm_hosts.h"
#include "blkbench/v1/agent.pb.h"
#include "common/runner.h"

namespace blkbench {

// Chooses the runner for a device class: the io_uring executor for real devices, the
// scheduler engine for "sim:" classes. Returns null for a class it cannot run.
using RunnerFactory = std::function<std::unique_ptr<Runner>(const std::string& device_class)>;

// What an agent can offer at registration: the facts of each allowlisted device that may be
// offered, and for the others why not (path, reason).
struct DeviceOffer {
  std::vector<v1::DeviceFacts> offered;
  std::vector<std::pair<std::string, std::string>> not_offered;
};

// The final report of assignment `a` whose cell run ended with `result`: SUCCEEDED
// carrying the result, CANCELED for a Cancelled status, FAILED otherwise, with the
// status's message as its error. What an agent sends, and what a local session takes.
v1::RunFinished RunFinishedOf(const v1::RunAssignment& a, absl::StatusOr<v1::RunResult> result);

// Thread-safe: Execute runs concurrently for different devices, and OfferDevices on the
// agent's session thread while runs go on.
class RunExecutor {
 public:
  // Cgroup layouts go under config.cgroup_parent and are journaled in `journal`'s
  // directory, so its RecoverAll also removes the groups of a crashed run (and the
  // null_blk devices and trace instances of one). `configfs` stands in for the kernel's
  // configfs calls when not null (tests); it outlives the executor.
  RunExecutor(const AgentConfig& config, QueueSettingsJournal& journal, RunnerFactory factory,
              ConfigfsOps* configfs = nullptr);
  ~RunExecutor();  // powers off the VM test hosts' guests

  // Runs the assignment to its end and returns the message to send to the controller:
  // outcome SUCCEEDED with the result (host, device facts and the exact queue settings
  // used attached), FAILED with the reason (nothing is written to a refused device), or
  // CANCELED. Repeat r runs CellForRepeat(cell, r), on real and simulated devices alike
  // (RunCell). A cell with a cgroup layout other than root has its groups built after the
  // queue settings and its jobs placed in them before their first I/O (on a real device;
  // the engine models layouts itself). Groups are removed and queue settings restored
  // before it returns, whatever happened.
  //
  // Wrong-disk protection first, before any sysfs write or cgroup: the allowlist, then
  // PrepareExclusiveWrite's checks and O_EXCL hold, then, under the hold, the device's
  // identity must be the one recorded by OfferDevices (a device never offered, or one that
  // is now a different disk or backing file, is refused with the reason).
  //
  // `trace`, if set, gets a traced cell's (trace: 1) block events as blkparse text
  // (BlockTraceOptions::text), written until Execute returns.
  v1::RunFinished Execute(const v1::RunAssignment& assignment, const std::atomic<bool>& cancel,
                          const std::function<void(const v1::Sample&)>& on_sample,
                          std::ostream* trace = nullptr);

  // The assignment's device may also be kNullBlkDevicePath (with a `null_blk:` config):
  // the run then gets its own null_blk device (NullBlkDevicePreparation), removed after it.
  //
  // For a registration: reads the facts and identity of every allowlisted device; the
  // identity is recorded the first time a device is seen and must match it later (see
  // DeviceIdentityRegistry). Devices that cannot be read or have changed are not offered,
  // and runs on them are refused until a later registration offers them. The facts carry
  // the device's serial, WWID and (loop devices) backing file. With a `null_blk:` config,
  // kNullBlkDevicePath (class null_blk) is offered while <configfs>/nullb exists, and
  // listed as not offered with the reason otherwise.
  DeviceOffer OfferDevices();

  VmHosts& vm_hosts() { return *vm_hosts_; }

 private:
  const AgentConfig& config_;
  QueueSettingsJournal& journal_;
  RunnerFactory factory_;
  std::unique_ptr<ConfigfsOps> own_configfs_;  // the real calls, unless a test gave its own
  ConfigfsOps& configfs_;
  std::unique_ptr<CgroupManager> cgroups_;
  DeviceIdentityRegistry identities_;
  std::unique_ptr<VmHosts> vm_hosts_;  // config.vm_hosts (none: inert)
};

}  // namespace blkbench

#endif  // BLKBENCH_AGENT_RUN_EXECUTOR_H_
