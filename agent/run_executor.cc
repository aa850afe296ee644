// RunExecutor: one run assignment through the one cell runner (agent/cell/), with the
// device prepared as a simulated or a real one; see run_executor.h.
#include "agent/run_executor.h"

#include "absl/strings/str_cat.h"
#include "agent/cell/null_blk_device.h"
#include "agent/cell/real_device.h"
#include "agent/cell/sim_device.h"
#include "agent/device/device_facts.h"
#include "agent/device/host_facts.h"
#include "workloads/cell_bounds.h"

namespace blkbench {
namespace {

// The report of `a` ending with `outcome`: its ids and lease, the outcome, the error.
v1::RunFinished Ended(const v1::RunAssignment& a, v1::RunOutcome outcome,
                      const std::string& error) {
  v1::RunFinished f;
  f.set_run_id(a.run_id());
  f.set_attempt(a.attempt());
  f.set_lease_id(a.lease_id());
  f.set_outcome(outcome);
  f.set_error(error);
  return f;
}

// An assignment refused before anything ran.
v1::RunFinished Refused(const v1::RunAssignment& a, const std::string& why) {
  return Ended(a, v1::RUN_OUTCOME_FAILED, why);
}

NullBlkPaths NullBlkPathsOf(const AgentConfig& config) {
  NullBlkPaths paths;
  paths.configfs = config.null_blk.configfs;
  paths.dev = config.null_blk.dev;
  return paths;
}

}  // namespace

RunExecutor::RunExecutor(const AgentConfig& config, QueueSettingsJournal& journal,
                         RunnerFactory factory, ConfigfsOps* configfs)
    : config_(config),
      journal_(journal),
      factory_(std::move(factory)),
      own_configfs_(configfs == nullptr ? RealConfigfs() : nullptr),
      configfs_(configfs == nullptr ? *own_configfs_ : *configfs),
      cgroups_(std::make_unique<CgroupManager>(journal.settings_journal(),
                                               CgroupOptions{.parent = config.cgroup_parent})),
      vm_hosts_(std::make_unique<VmHosts>(config)) {}

RunExecutor::~RunExecutor() = default;

DeviceOffer RunExecutor::OfferDevices() {
  DeviceOffer offer;
  for (const AllowedDevice& d : config_.devices) {
    absl::StatusOr<DeviceIdentity> identity = ReadDeviceIdentity(d.path);
    absl::StatusOr<v1::DeviceFacts> facts = ReadDeviceFacts(d.path, d.device_class);
    // A device whose facts cannot be read is not offered either: record that too.
    if (identity.ok() && !facts.ok()) identity = facts.status();
    if (absl::Status status = identities_.Register(d.path, identity); !status.ok()) {
      offer.not_offered.emplace_back(d.path, status.ToString());
      continue;
    }
    facts->set_path(d.path);
    // (ReadDeviceFacts set the class: the config's, or the detected one when it has none.)
    facts->set_serial(identity->serial);
    facts->set_wwid(identity->wwid);
    facts->set_backing_file(identity->backing_file);
    offer.offered.push_back(*std::move(facts));
  }
  if (config_.null_blk.enabled) {
    NullBlkProvisioner provisioner(NullBlkPathsOf(config_), journal_.settings_journal(), configfs_);
    if (absl::Status available = provisioner.Available(); !available.ok()) {
      offer.not_offered.emplace_back(kNullBlkDevicePath, available.ToString());
    } else {
      v1::DeviceFacts facts;
      facts.set_path(kNullBlkDevicePath);
      facts.set_device_class("null_blk");
      facts.set_is_block(true);
      offer.offered.push_back(std::move(facts));
    }
  }
  vm_hosts_->Offer(offer.offered, offer.not_offered);
  return offer;
}

v1::RunFinished RunExecutor::Execute(const v1::RunAssignment& a, const std::atomic<bool>& cancel,
                                     const std::function<void(const v1::Sample&)>& on_sample,
                                     std::ostream* trace) {
  // Defense in depth first: the cell must be one the matrix parser could have produced,
  // whoever the controller is. Nothing is touched otherwise.
  if (absl::Status bounds = workloads::CheckCellBounds(a.cell()); !bounds.ok()) {
    return Refused(a, absl::StrCat("refused the assignment: ", bounds.message()));
  }
  // A VM test host's device: the run happens in its guest, through this same code there.
  if (IsVmDevicePath(a.device_path())) return vm_hosts_->Execute(a, cancel, on_sample);
  // Simulated devices touch no hardware: no allowlist, safety checks or sysfs.
  SimulatedDevicePreparation simulated;
  std::unique_ptr<RealDevicePreparation> real;
  DevicePreparation* device = nullptr;
  std::string device_class;
  for (const std::string& sim : config_.sim_devices) {
    if (sim == a.device_path()) {
      device = &simulated;
      device_class = sim;
    }
  }
  std::unique_ptr<NullBlkDevicePreparation> null_blk;
  if (device == nullptr && config_.null_blk.enabled && a.device_path() == kNullBlkDevicePath) {
    null_blk = std::make_unique<NullBlkDevicePreparation>(NullBlkPathsOf(config_), configfs_,
                                                          journal_, *cgroups_);
    device = null_blk.get();
    device_class = "null_blk";
  }
  if (device == nullptr) {
    // The device must be on the allowlist.
    const AllowedDevice* allowed = nullptr;
    for (const AllowedDevice& d : config_.devices) {
      if (d.path == a.device_path()) allowed = &d;
    }
    if (allowed == nullptr) {
      return Refused(
          a, absl::StrCat("refused: '", a.device_path(), "' is not on this agent's allowlist"));
    }
    std::vector<AllowlistEntry> allowlist;
    for (const AllowedDevice& d : config_.devices) allowlist.push_back({d.path, d.device_class});
    real = std::make_unique<RealDevicePreparation>(allowed->device_class, std::move(allowlist),
                                                   identities_, journal_, *cgroups_);
    device = real.get();
    device_class = allowed->device_class;
  }
  auto runner = factory_(device_class);
  if (runner == nullptr) {
    return Refused(a, absl::StrCat("no runner for device class '", device_class, "'"));
  }

  CellRun run;
  run.cell = a.cell();
  run.repeat = a.repeat();
  run.device = a.device_path();
  run.name = absl::StrCat("run-", a.run_id(), "-", a.attempt());
  run.sample_interval =
      std::chrono::milliseconds(a.sample_interval_ms() ? a.sample_interval_ms() : 1000);
  run.on_sample = on_sample;
  run.cancel = &cancel;
  run.trace = trace;
  v1::RunFinished f = RunFinishedOf(a, RunCell(run, *device, *runner));
  if (f.outcome() == v1::RUN_OUTCOME_SUCCEEDED) {
    *f.mutable_result()->mutable_host() = ReadHostFacts();
  }
  return f;
}

v1::RunFinished RunFinishedOf(const v1::RunAssignment& a, absl::StatusOr<v1::RunResult> result) {
  if (!result.ok()) {
    return Ended(
        a, absl::IsCancelled(result.status()) ? v1::RUN_OUTCOME_CANCELED : v1::RUN_OUTCOME_FAILED,
        std::string(result.status().message()));
  }
  v1::RunFinished f = Ended(a, v1::RUN_OUTCOME_SUCCEEDED, "");
  *f.mutable_result() = *std::move(result);
  return f;
}

}  // namespace blkbench
