// RunExecutor: one run on one device, with the host left as found; see run_executor.h.
#include "agent/run_executor.h"

#include "absl/strings/str_cat.h"
#include "agent/device/device_facts.h"
#include "agent/device/host_facts.h"
#include "agent/device/safety.h"
#include "common/resolved_job.h"
#include "workloads/cell_bounds.h"

namespace blkbench {
namespace {

v1::RunFinished Failed(const v1::RunAssignment& a, v1::RunOutcome outcome,
                       const std::string& error) {
  v1::RunFinished f;
  f.set_run_id(a.run_id());
  f.set_attempt(a.attempt());
  f.set_lease_id(a.lease_id());
  f.set_outcome(outcome);
  f.set_error(error);
  return f;
}

}  // namespace

RunExecutor::RunExecutor(const AgentConfig& config, QueueSettingsJournal& journal,
                         RunnerFactory factory)
    : config_(config),
      journal_(journal),
      factory_(std::move(factory)),
      cgroups_(std::make_unique<CgroupManager>(journal.settings_journal(),
                                               CgroupOptions{.parent = config.cgroup_parent})) {}

v1::DeviceFacts SimulatedDeviceFacts(const std::string& device_class) {
  v1::DeviceFacts f;
  f.set_path(device_class);
  f.set_device_class(device_class);
  f.set_simulated(true);
  f.set_size_bytes(kSimulatedDeviceBytes);
  f.set_logical_block_size(512);
  f.set_physical_block_size(512);
  f.set_rotational(device_class == "sim:hdd");
  f.set_model("blkbench engine");
  for (const char* s : {"none", "mq-deadline", "bfq", "kyber"}) f.add_schedulers(s);
  f.mutable_queue()->set_scheduler("none");
  return f;
}

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
    facts->set_device_class(d.device_class);
    facts->set_serial(identity->serial);
    facts->set_wwid(identity->wwid);
    facts->set_backing_file(identity->backing_file);
    offer.offered.push_back(*std::move(facts));
  }
  return offer;
}

v1::RunFinished RunExecutor::ExecuteSimulated(
    const v1::RunAssignment& a, const std::atomic<bool>& cancel,
    const std::function<void(const v1::Sample&)>& on_sample) {
  auto runner = factory_(a.device_path());
  if (runner == nullptr) {
    return Failed(a, v1::RUN_OUTCOME_FAILED,
                  absl::StrCat("no runner for device class '", a.device_path(), "'"));
  }
  RunContext ctx;
  // A model is deterministic: repeats differ only by their seed (CellForRepeat, as
  // `blkbench sim` does), so repeats are independent samples for the gate.
  ctx.cell = CellForRepeat(a.cell(), a.repeat());
  ctx.target_path = a.device_path();
  ctx.target_size = kSimulatedDeviceBytes;
  ctx.sample_interval =
      std::chrono::milliseconds(a.sample_interval_ms() ? a.sample_interval_ms() : 1000);
  ctx.on_sample = on_sample;
  ctx.cancel = &cancel;
  auto result = runner->Run(ctx);
  if (!result.ok()) {
    return Failed(
        a, absl::IsCancelled(result.status()) ? v1::RUN_OUTCOME_CANCELED : v1::RUN_OUTCOME_FAILED,
        std::string(result.status().message()));
  }
  v1::RunFinished f = Failed(a, v1::RUN_OUTCOME_SUCCEEDED, "");
  *f.mutable_result() = std::move(*result);
  *f.mutable_result()->mutable_host() = ReadHostFacts();
  *f.mutable_result()->mutable_device() = SimulatedDeviceFacts(a.device_path());
  *f.mutable_result()->mutable_applied() = a.cell().queue();
  return f;
}

v1::RunFinished RunExecutor::Execute(const v1::RunAssignment& a, const std::atomic<bool>& cancel,
                                     const std::function<void(const v1::Sample&)>& on_sample) {
  // 0. Defense in depth: the cell must be one the matrix parser could have produced,
  // whoever the controller is. Nothing is touched otherwise.
  if (absl::Status bounds = workloads::CheckCellBounds(a.cell()); !bounds.ok()) {
    return Failed(a, v1::RUN_OUTCOME_FAILED,
                  absl::StrCat("refused the assignment: ", bounds.message()));
  }
  // Simulated devices touch no hardware: no allowlist, safety checks or sysfs.
  for (const std::string& sim : config_.sim_devices) {
    if (sim == a.device_path()) return ExecuteSimulated(a, cancel, on_sample);
  }
  // 1. The device must be on the allowlist.
  const AllowedDevice* allowed = nullptr;
  for (const AllowedDevice& d : config_.devices) {
    if (d.path == a.device_path()) allowed = &d;
  }
  if (allowed == nullptr) {
    return Failed(
        a, v1::RUN_OUTCOME_FAILED,
        absl::StrCat("refused: '", a.device_path(), "' is not on this agent's allowlist"));
  }
  auto runner = factory_(allowed->device_class);
  if (runner == nullptr) {
    return Failed(a, v1::RUN_OUTCOME_FAILED,
                  absl::StrCat("no runner for device class '", allowed->device_class, "'"));
  }

  // 2. Wrong-disk protection before the first write: resolve (symlinks may have moved),
  // check, hold with O_EXCL, and check again through the held descriptor.
  std::vector<AllowlistEntry> entries;
  for (const AllowedDevice& d : config_.devices) entries.push_back({d.path, d.device_class});
  auto hold = PrepareExclusiveWrite(entries, a.device_path());
  if (!hold.ok()) {
    return Failed(a, v1::RUN_OUTCOME_FAILED, absl::StrCat("refused: ", hold.status().message()));
  }
  const std::string resolved = hold->path();

  // Under the hold, before anything is changed: still the device the agent registered?
  absl::StatusOr<DeviceIdentity> identity = ReadDeviceIdentity(a.device_path());
  if (!identity.ok()) {
    return Failed(a, v1::RUN_OUTCOME_FAILED,
                  absl::StrCat("refused: reading the identity of ", a.device_path(), ": ",
                               identity.status().message()));
  }
  if (identity->resolved != resolved) {
    return Failed(a, v1::RUN_OUTCOME_FAILED,
                  absl::StrCat("refused: ", a.device_path(), " resolved to ", identity->resolved,
                               " while ", resolved, " was held"));
  }
  if (absl::Status same = identities_.Check(a.device_path(), *identity); !same.ok()) {
    return Failed(a, v1::RUN_OUTCOME_FAILED, absl::StrCat("refused: ", same.message()));
  }

  auto facts = ReadDeviceFacts(resolved, allowed->device_class);
  if (!facts.ok()) return Failed(a, v1::RUN_OUTCOME_FAILED, std::string(facts.status().message()));
  facts->set_path(a.device_path());

  // 3. Queue settings: originals journaled durably first, restored below.
  v1::QueueSettings applied;
  if (absl::Status s = journal_.Apply(*facts, a.cell().queue(), &applied); !s.ok()) {
    return Failed(a, v1::RUN_OUTCOME_FAILED,
                  absl::StrCat("applying queue settings: ", s.message()));
  }

  // Regular files have no queue settings, so nothing was journaled for them.
  auto restore_queue = [&] {
    return facts->is_block() ? journal_.Restore(facts->kernel_name()) : absl::OkStatus();
  };

  // 4. The cell's cgroups, journaled before they are made. After the queue settings: bfq's
  // weight files exist once a device runs bfq.
  std::unique_ptr<CgroupPlacement> cgroups;
  if (a.cell().cgroup_layout().kind() != v1::CgroupLayout::ROOT) {
    auto built = cgroups_->Build(absl::StrCat("run-", a.run_id(), "-", a.attempt()),
                                 a.cell().cgroup_layout(), a.cell().job().numjobs(),
                                 a.cell().job().thread());
    if (!built.ok()) {
      std::string error =
          absl::StrCat("cgroup layout '", a.cell().cgroup(), "': ", built.status().message());
      if (absl::Status s = restore_queue(); !s.ok()) {
        absl::StrAppend(&error, "; restoring queue settings: ", s.message());
      }
      return Failed(a, v1::RUN_OUTCOME_FAILED, error);
    }
    cgroups = std::move(*built);
  }

  RunContext ctx;
  ctx.cell = a.cell();
  ctx.target_path = resolved;
  ctx.target_size = facts->size_bytes();
  ctx.logical_block_size = facts->logical_block_size() ? facts->logical_block_size() : 512;
  ctx.sample_interval =
      std::chrono::milliseconds(a.sample_interval_ms() ? a.sample_interval_ms() : 1000);
  ctx.on_sample = on_sample;
  ctx.cancel = &cancel;
  if (cgroups != nullptr) {
    ctx.place_job = [p = cgroups.get()](uint32_t job, int tid) { return p->Place(job, tid); };
  }
  auto result = runner->Run(ctx);

  // 5. Undo in reverse order; the runner has reaped every job, so the groups are empty.
  std::string undo_error;
  if (cgroups != nullptr) {
    if (absl::Status s = cgroups->Remove(); !s.ok()) {
      absl::StrAppend(&undo_error, "removing cgroups: ", s.message());
    }
  }
  if (absl::Status s = restore_queue(); !s.ok()) {
    absl::StrAppend(&undo_error, undo_error.empty() ? "" : "; ",
                    "restoring queue settings: ", s.message());
  }
  if (!result.ok()) {
    const v1::RunOutcome outcome =
        absl::IsCancelled(result.status()) ? v1::RUN_OUTCOME_CANCELED : v1::RUN_OUTCOME_FAILED;
    std::string error(result.status().message());
    if (!undo_error.empty()) absl::StrAppend(&error, "; ", undo_error);
    return Failed(a, outcome, error);
  }
  if (!undo_error.empty()) {
    return Failed(a, v1::RUN_OUTCOME_FAILED,
                  absl::StrCat("run completed but leaving the host as found failed: ", undo_error));
  }
  v1::RunFinished f = Failed(a, v1::RUN_OUTCOME_SUCCEEDED, "");
  *f.mutable_result() = std::move(*result);
  *f.mutable_result()->mutable_host() = ReadHostFacts();
  *f.mutable_result()->mutable_device() = *facts;
  *f.mutable_result()->mutable_applied() = applied;
  return f;
}

}  // namespace blkbench
