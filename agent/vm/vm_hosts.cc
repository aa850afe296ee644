// VM test hosts of the agent; see vm_hosts.h.
#include "agent/vm/vm_hosts.h"

#include <algorithm>
#include <map>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/synchronization/notification.h"
#include "common/log/log.h"
#include "common/vm/channel.h"
#include "common/vm/files.h"
#include "common/vm/vm_host.h"

namespace blkbench {
namespace {

// A cell run's bound is its silence (vm_silence_timeout_ms), not its length: the
// controller's lease and cancel bound the length.
constexpr absl::Duration kRunTimeout = absl::Hours(24);
constexpr absl::Duration kOfferTimeout = absl::Minutes(2);
// How often a run's cancel flag is looked at (the flag has no notification).
constexpr absl::Duration kCancelPoll = absl::Milliseconds(50);
constexpr char kNullBlkName[] = "null_blk";

v1::RunFinished Finished(const v1::RunAssignment& a, v1::RunOutcome outcome,
                         const std::string& error) {
  v1::RunFinished f;
  f.set_run_id(a.run_id());
  f.set_attempt(a.attempt());
  f.set_lease_id(a.lease_id());
  f.set_outcome(outcome);
  f.set_error(error);
  return f;
}

vm::VmDisk::Kind KindOf(const std::string& kind) {
  if (kind == "hdd") return vm::VmDisk::Kind::kHdd;
  if (kind == "virtio") return vm::VmDisk::Kind::kVirtio;
  return vm::VmDisk::Kind::kNvme;
}

vm::Accel AccelOf(const std::string& accel) {
  if (accel == "kvm") return vm::Accel::kKvm;
  if (accel == "tcg") return vm::Accel::kTcg;
  return vm::Accel::kAuto;
}

// The disk kind a guest block device name belongs to ("" for none of ours).
std::string KindOfGuestName(absl::string_view name) {
  if (absl::StartsWith(name, "nvme")) return "nvme";
  if (absl::StartsWith(name, "sd")) return "hdd";
  if (absl::StartsWith(name, "vd")) return "virtio";
  return "";
}

std::string HostPath(const std::string& host, absl::string_view guest_path) {
  if (guest_path == kNullBlkDevicePath)
    return absl::StrCat(kVmDevicePrefix, host, "/", kNullBlkName);
  absl::ConsumePrefix(&guest_path, "/dev/");
  return absl::StrCat(kVmDevicePrefix, host, "/", guest_path);
}

}  // namespace

bool IsVmDevicePath(absl::string_view path) { return absl::StartsWith(path, kVmDevicePrefix); }

VmHosts::VmHosts(const AgentConfig& config) : config_(config) {
  if (config.vm_hosts.empty()) return;
  // Guests of a crashed agent died with it (PR_SET_PDEATHSIG); their directories did not.
  work_parent_ = config.state_dir + "/vms";
  if (absl::Status s = vm::RemoveTree(work_parent_); !s.ok()) {
    LogEvent(LogLevel::kWarning, "agent", "vm_leftovers_not_removed").Field("error", s.ToString());
  }
  if (absl::Status s = vm::MakeDirs(work_parent_); !s.ok()) {
    LogEvent(LogLevel::kWarning, "agent", "vm_dir_failed").Field("error", s.ToString());
  }
  for (const VmHostConfig& c : config.vm_hosts) {
    auto h = std::make_unique<Host>();
    h->config = c;
    hosts_.push_back(std::move(h));
  }
}

VmHosts::~VmHosts() {
  for (auto& h : hosts_) {
    std::lock_guard<std::mutex> lock(h->mu);
    Stop(*h);
  }
  if (!work_parent_.empty()) (void)vm::RemoveTree(work_parent_);
}

VmHosts::Host* VmHosts::Find(absl::string_view name) {
  for (auto& h : hosts_) {
    if (h->config.name == name) return h.get();
  }
  return nullptr;
}

pid_t VmHosts::QemuPid(const std::string& host) {
  Host* h = Find(host);
  return h == nullptr ? -1 : h->qemu_pid.load();
}

void VmHosts::Stop(Host& h) {
  if (h.guest == nullptr) return;
  if (absl::Status s = h.guest->Shutdown(); !s.ok()) {
    LogEvent(LogLevel::kWarning, "agent", "vm_shutdown_failed")
        .Field("vm", h.config.name)
        .Field("error", s.ToString());
  }
  h.guest.reset();
  h.qemu_pid = -1;
}

absl::Status VmHosts::EnsureBooted(Host& h) {
  if (h.guest != nullptr && h.guest->alive()) return absl::OkStatus();
  Stop(h);
  if (abort_boots_.load())
    return absl::CancelledError("boots were aborted (the process is stopping)");
  if (!h.prepared) {
    vm::VmHostSpec spec;
    spec.kernel = h.config.kernel;
    spec.vcpus = h.config.vcpus;
    spec.memory_mb = h.config.memory_mb;
    spec.accel = AccelOf(h.config.accel);
    spec.cache_dir = config_.kernel_cache;
    spec.work_parent = work_parent_;
    spec.cmdline = h.config.cmdline;
    for (const VmDiskConfig& d : h.config.disks) {
      spec.disks.push_back({KindOf(d.kind), d.size_bytes, d.serial, d.queues});
    }
    absl::StatusOr<vm::VmConfig> prepared = vm::PrepareVm(spec);
    if (!prepared.ok()) return prepared.status();
    h.prepared = *std::move(prepared);
    h.prepared->abort_boot = &abort_boots_;
  }
  absl::StatusOr<std::unique_ptr<vm::Guest>> guest =
      vm::Guest::Boot(*h.prepared, absl::Milliseconds(config_.vm_boot_timeout_ms));
  if (!guest.ok()) return guest.status();
  h.guest = *std::move(guest);
  h.qemu_pid = h.guest->qemu_pid();
  const vm::VmFacts& f = h.guest->facts();
  h.facts.set_name(h.config.name);
  h.facts.set_release(f.release);
  h.facts.set_kernel_spec(h.config.kernel);
  h.facts.set_kernel_package(h.prepared->kernel.package);
  h.facts.set_kernel_sha256(h.prepared->kernel.sha256);
  h.facts.set_accel(f.accel);
  h.facts.set_qemu_version(f.qemu_version);
  h.facts.set_vcpus(static_cast<uint32_t>(f.vcpus));
  h.facts.set_memory_mb(static_cast<uint32_t>(f.memory_mb));
  h.facts.set_boot_ms(static_cast<uint64_t>(absl::ToInt64Milliseconds(f.boot_time)));
  LogEvent(LogLevel::kInfo, "agent", "vm_booted")
      .Field("vm", h.config.name)
      .Field("release", f.release)
      .Field("accel", f.accel)
      .Field("boot_ms", absl::StrCat(h.facts.boot_ms()));
  return absl::OkStatus();
}

v1::VmCellRequest VmHosts::CellRequest(const Host& h) const {
  v1::VmCellRequest r;
  // The guest names disks by kind in the order qemu attached them: the n-th nvme of the
  // config is the n-th nvme name in the guest, and so on.
  std::map<std::string, std::vector<std::string>> names;  // kind → guest names, sorted
  for (const std::string& name : h.guest->block_devices()) {
    const std::string kind = KindOfGuestName(name);
    if (!kind.empty()) names[kind].push_back(name);
  }
  std::map<std::string, size_t> next;  // kind → index of its next config disk
  for (const VmDiskConfig& d : h.config.disks) {
    std::vector<std::string>& of_kind = names[d.kind];
    const size_t i = next[d.kind]++;
    if (i >= of_kind.size()) continue;  // the guest lacks it: not offered
    std::sort(of_kind.begin(), of_kind.end());
    v1::VmCellDevice* dev = r.add_devices();
    dev->set_path("/dev/" + of_kind[i]);
    dev->set_device_class(!d.device_class.empty() ? d.device_class
                          : d.kind == "virtio"    ? "virtio"
                                                  : "");
  }
  r.set_null_blk(h.config.null_blk);
  return r;
}

absl::Status VmHosts::RunCell(Host& h, const v1::VmCellRequest& request, absl::Duration timeout,
                              const std::function<void(v1::VmCellEvent&)>& on_event) {
  absl::StatusOr<std::string> program = vm::FindVmProgram("blkbench-vm-cell");
  if (!program.ok()) return program.status();
  vm::GuestRunRequest r;
  r.argv = {*program};
  r.stdin_data = request.SerializeAsString();
  r.timeout = timeout;
  r.silence_timeout = absl::Milliseconds(config_.vm_silence_timeout_ms);
  vm::FrameSplitter frames;
  absl::Status stream = absl::OkStatus();
  r.on_output = [&](bool is_stderr, absl::string_view data) {
    if (is_stderr || !stream.ok()) return;
    frames.Append(data);
    for (;;) {
      v1::VmCellEvent ev;
      absl::StatusOr<bool> whole = frames.Next(ev);
      if (!whole.ok()) stream = whole.status();
      if (!whole.ok() || !*whole) return;
      on_event(ev);
    }
  };
  absl::StatusOr<vm::GuestRunResult> done = h.guest->Run(r);
  if (!done.ok()) return done.status();
  if (!stream.ok()) {
    return absl::DataLossError(
        absl::StrCat("blkbench-vm-cell's output in VM '", h.config.name, "': ", stream.message()));
  }
  if (done->exit_code != 0) {
    return absl::InternalError(absl::StrCat(
        "blkbench-vm-cell in VM '", h.config.name, "' ended with ",
        done->signal != 0 ? absl::StrCat("signal ", done->signal)
                          : absl::StrCat("exit ", done->exit_code),
        ": ",
        done->stderr_data.substr(done->stderr_data.size() > 4096 ? done->stderr_data.size() - 4096
                                                                 : 0)));
  }
  return absl::OkStatus();
}

void VmHosts::Offer(std::vector<v1::DeviceFacts>& offered,
                    std::vector<std::pair<std::string, std::string>>& not_offered) {
  for (auto& hp : hosts_) {
    Host& h = *hp;
    std::unique_lock<std::mutex> lock(h.mu, std::try_to_lock);
    if (!lock.owns_lock()) {  // busy with a run: its devices have not changed
      std::lock_guard<std::mutex> offer_lock(h.offer_mu);
      offered.insert(offered.end(), h.last_offer.begin(), h.last_offer.end());
      continue;
    }
    const std::string where = kVmDevicePrefix + h.config.name;
    if (absl::Status booted = EnsureBooted(h); !booted.ok()) {
      if (!absl::IsCancelled(booted)) {  // (aborted: the process is stopping, not a fault)
        LogEvent(LogLevel::kWarning, "agent", "vm_not_offered")
            .Field("vm", h.config.name)
            .Field("error", booted.ToString());
      }
      not_offered.emplace_back(where, booted.ToString());
      continue;
    }
    v1::VmCellRequest request = CellRequest(h);
    request.mutable_offer();
    std::vector<v1::DeviceFacts> mine;
    absl::Status asked = RunCell(h, request, kOfferTimeout, [&](v1::VmCellEvent& ev) {
      if (!ev.has_offered()) return;
      for (v1::DeviceFacts& f : *ev.mutable_offered()->mutable_offered()) {
        f.set_path(HostPath(h.config.name, f.path()));
        *f.mutable_vm() = h.facts;
        mine.push_back(std::move(f));
      }
      for (const v1::VmCellNotOffered& n : ev.offered().not_offered()) {
        not_offered.emplace_back(HostPath(h.config.name, n.path()), n.reason());
      }
    });
    if (!asked.ok()) {
      not_offered.emplace_back(where, asked.ToString());
      if (!h.guest->alive()) Stop(h);
      continue;
    }
    {
      std::lock_guard<std::mutex> offer_lock(h.offer_mu);
      h.last_offer = mine;
    }
    offered.insert(offered.end(), mine.begin(), mine.end());
  }
}

v1::RunFinished VmHosts::Execute(const v1::RunAssignment& a, const std::atomic<bool>& cancel,
                                 const std::function<void(const v1::Sample&)>& on_sample) {
  absl::string_view rest = a.device_path();
  absl::ConsumePrefix(&rest, kVmDevicePrefix);
  const size_t slash = rest.find('/');
  Host* h = slash == absl::string_view::npos ? nullptr : Find(rest.substr(0, slash));
  if (h == nullptr) {
    return Finished(a, v1::RUN_OUTCOME_FAILED,
                    absl::StrCat("refused: '", a.device_path(),
                                 "' is not a device of this agent's VM test hosts"));
  }
  const absl::string_view device = rest.substr(slash + 1);
  std::lock_guard<std::mutex> lock(h->mu);
  if (cancel.load()) return Finished(a, v1::RUN_OUTCOME_CANCELED, "canceled before it started");
  if (absl::Status booted = EnsureBooted(*h); !booted.ok()) {
    return Finished(
        a, v1::RUN_OUTCOME_FAILED,
        absl::StrCat("VM test host '", h->config.name, "' did not boot: ", booted.message()));
  }
  v1::VmCellRequest request = CellRequest(*h);
  const std::string guest_path =
      device == kNullBlkName ? std::string(kNullBlkDevicePath) : absl::StrCat("/dev/", device);
  const bool known =
      std::any_of(request.devices().begin(), request.devices().end(),
                  [&](const v1::VmCellDevice& d) { return d.path() == guest_path; }) ||
      (device == kNullBlkName && h->config.null_blk);
  if (!known) {
    return Finished(a, v1::RUN_OUTCOME_FAILED,
                    absl::StrCat("refused: '", a.device_path(), "' is not a device of VM '",
                                 h->config.name, "'"));
  }
  *request.mutable_run() = a;
  request.mutable_run()->set_device_path(guest_path);

  // Cancel and fencing kill the guest: its run cannot outlive the lease.
  absl::Notification ended;
  vm::Guest* guest = h->guest.get();
  std::thread watcher([&] {
    while (!ended.WaitForNotificationWithTimeout(kCancelPoll)) {
      if (cancel.load()) {
        guest->Abort();
        return;
      }
    }
  });
  std::optional<v1::RunFinished> finished;
  absl::Status ran = RunCell(*h, request, kRunTimeout, [&](v1::VmCellEvent& ev) {
    if (ev.has_sample()) on_sample(ev.sample());
    if (ev.has_finished()) finished = std::move(*ev.mutable_finished());
  });
  ended.Notify();
  watcher.join();
  if (cancel.load()) {
    Stop(*h);
    return Finished(a, v1::RUN_OUTCOME_CANCELED,
                    absl::StrCat("canceled: VM '", h->config.name, "' was powered off"));
  }
  if (!ran.ok() || !finished) {
    if (!h->guest->alive()) Stop(*h);  // booted again for the next run
    return Finished(a, v1::RUN_OUTCOME_FAILED,
                    ran.ok() ? "blkbench-vm-cell ended without a result"
                             : absl::StrCat("in VM '", h->config.name, "': ", ran.message()));
  }
  v1::RunFinished f = *std::move(finished);
  if (f.outcome() == v1::RUN_OUTCOME_FAILED) {
    // What the guest's kernel said (a refused null_blk attribute, an I/O error) is often
    // the reason: the console carries its messages.
    f.set_error(absl::StrCat(f.error(), "\n--- console tail of VM '", h->config.name, "' ---\n",
                             h->guest->ConsoleTail()));
  }
  f.set_run_id(a.run_id());
  f.set_attempt(a.attempt());
  f.set_lease_id(a.lease_id());
  if (f.has_result()) {
    v1::DeviceFacts* d = f.mutable_result()->mutable_device();
    d->set_path(a.device_path());
    *d->mutable_vm() = h->facts;
  }
  return f;
}

}  // namespace blkbench
