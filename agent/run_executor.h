// RunExecutor: carries out one run assignment on one allowlisted device — safety
// checks, exclusive hold, queue settings applied and journaled, the cell's cgroup layout
// built (journaled too), the Runner, and the host restored — without knowing anything
// about the controller connection.
#ifndef BLKBENCH_AGENT_RUN_EXECUTOR_H_
#define BLKBENCH_AGENT_RUN_EXECUTOR_H_

#include <atomic>
#include <functional>
#include <memory>
#include <string>

#include "agent/cgroup/cgroup_manager.h"
#include "agent/config.h"
#include "agent/device/queue_settings.h"
#include "blkbench/v1/agent.pb.h"
#include "common/runner.h"

namespace blkbench {

// Chooses the runner for a device class: the io_uring executor for real devices, the
// scheduler engine for "sim:" classes. Returns null for a class it cannot run.
using RunnerFactory = std::function<std::unique_ptr<Runner>(const std::string& device_class)>;

// Facts of a simulated device as agents register them: path and class are the same
// ("sim:ssd"); the engine models the device itself.
v1::DeviceFacts SimulatedDeviceFacts(const std::string& device_class);

class RunExecutor {
 public:
  // Cgroup layouts go under config.cgroup_parent and are journaled in `journal`'s
  // directory, so its RecoverAll also removes the groups of a crashed run.
  RunExecutor(const AgentConfig& config, QueueSettingsJournal& journal, RunnerFactory factory);

  // Runs the assignment to its end and returns the message to send to the controller:
  // outcome SUCCEEDED with the result (host, device facts and the exact queue settings
  // used attached), FAILED with the reason (nothing is written to a refused device), or
  // CANCELED. A cell with a cgroup layout other than root has its groups built after the
  // queue settings and its jobs placed in them before their first I/O (on a real device;
  // the engine models layouts itself). Groups are removed and queue settings restored
  // before it returns, whatever happened.
  v1::RunFinished Execute(const v1::RunAssignment& assignment, const std::atomic<bool>& cancel,
                          const std::function<void(const v1::Sample&)>& on_sample);

 private:
  v1::RunFinished ExecuteSimulated(const v1::RunAssignment& assignment,
                                   const std::atomic<bool>& cancel,
                                   const std::function<void(const v1::Sample&)>& on_sample);

  const AgentConfig& config_;
  QueueSettingsJournal& journal_;
  RunnerFactory factory_;
  std::unique_ptr<CgroupManager> cgroups_;
};

}  // namespace blkbench

#endif  // BLKBENCH_AGENT_RUN_EXECUTOR_H_
