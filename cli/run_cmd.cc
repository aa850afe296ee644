// `blkbench run FILE --device PATH...` and `--vm KIND --kernel SPEC`: the agent's run
// path on local devices or in guests inside the daemon-less loop of `blkbench sim`; see
// run_cmd.h.
#include "cli/run_cmd.h"

#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "agent/config.h"
#include "agent/device/host_facts.h"
#include "agent/device/queue_settings.h"
#include "agent/device/safety.h"
#include "agent/run_executor.h"
#include "agent/runners.h"
#include "cli/command_args.h"
#include "cli/command_registry.h"
#include "cli/format.h"
#include "cli/local_run.h"
#include "cli/run_device_table.h"
#include "cli/signal_canceller.h"
#include "common/log/log.h"
#include "common/placement.h"
#include "common/resolved_job.h"
#include "controller/store/store_factory.h"
#include "workloads/format.h"

namespace blkbench {
namespace {

// "PATH" or "PATH=CLASS" (a class overrides detection, as `class:` in agent.yaml does).
AllowedDevice ParseDevice(const std::string& arg) {
  const size_t eq = arg.rfind('=');
  if (eq == std::string::npos || arg.find('/', eq) != std::string::npos) return {arg, ""};
  return {arg.substr(0, eq), arg.substr(eq + 1)};
}

// The executor's log events, for as long as it lives, without those the command says
// itself: the info ones (a guest booted: a progress line) and a guest not offered (an
// error line); other warnings (a guest that would not power off) still show.
class WarningsOnly : public LogSink {
 public:
  WarningsOnly() : previous_(SetLogSink(this)) {}
  ~WarningsOnly() override { SetLogSink(previous_); }
  WarningsOnly(const WarningsOnly&) = delete;
  WarningsOnly& operator=(const WarningsOnly&) = delete;
  void Write(LogLevel level, absl::string_view line) override {
    if (level == LogLevel::kInfo || absl::StrContains(line, " event=vm_not_offered ")) return;
    const std::string text = absl::StrCat(line, "\n");
    (void)!write(STDERR_FILENO, text.data(), text.size());
  }

 private:
  LogSink* previous_;
};

// "vm:k0/null_blk (null_blk, kernel 6.12.57+deb12-amd64)", "/dev/loop0 (loop, detected)".
std::string Describe(const v1::DeviceFacts& f) {
  if (f.has_vm()) {
    return absl::StrCat(f.path(), " (", f.device_class(), ", kernel ", f.vm().release(), ")");
  }
  return absl::StrCat(f.path(), " (", f.device_class(),
                      f.device_class() == f.detected_class() ? ", detected" : "", ")");
}

}  // namespace

int RunOnDevices(const RunOptions& options, std::ostream& out, std::ostream& err) {
  SessionOptions session = options.session;
  if (session.command.empty()) session.command = "run";
  const std::string who = absl::StrCat("blkbench ", session.command, ": ");
  const bool in_vms = options.vm.any();
  std::vector<VmHostConfig> hosts;
  if (in_vms) {
    if (!options.devices.empty()) {
      err << who
          << "--vm and --device cannot be combined: run the guests' matrix and this host's "
             "devices as two runs\n";
      return 2;
    }
    if (!session.trace_path.empty()) {
      err << who
          << "--trace is not available with --vm: a guest's block events stay in the "
             "guest\n";
      return 2;
    }
    absl::StatusOr<std::vector<VmHostConfig>> parsed = VmHostsFromFlags(options.vm);
    if (!parsed.ok()) {
      err << who << parsed.status().message() << "\n";
      return 2;
    }
    hosts = *std::move(parsed);
  } else if (options.devices.empty()) {
    err << who
        << "give the devices to run on with --device PATH (one per device), or a guest's "
           "with --vm KIND --kernel SPEC\n";
    return 2;
  }
  std::shared_ptr<const workloads::Matrix> matrix = session.matrix;
  if (!session.trace_path.empty()) {
    // --trace is a request to trace: every cell traced (trace: 1), as stored with its
    // results, so that a cell's numbers always say whether tracing was on while they ran.
    auto traced = std::make_shared<workloads::Matrix>(*session.matrix);
    int turned_on = 0;
    for (v1::CellSpec& cell : traced->cells) {
      if (cell.trace() > 0) continue;
      cell.set_trace(1);
      ++turned_on;
    }
    if (turned_on > 0 && !session.quiet) {
      err << who << "--trace: block tracing " << turned_on << " cell" << (turned_on == 1 ? "" : "s")
          << " without trace: 1 as well (stored as trace: 1)\n";
    }
    matrix = std::move(traced);
  }
  for (const v1::CellSpec& cell : matrix->cells) {
    if (IsSimulated(cell.target().device_class())) {
      err << session.path << ": cell " << cell.index() << " (" << workloads::CellLabel(cell)
          << ") has the simulated class '" << cell.target().device_class()
          << "'; run simulated cells with blkbench sim\n";
      return 1;
    }
  }
  // Every guest has the same devices: a class none of them is fails before any boot.
  if (in_vms) {
    const std::string missing =
        CellsWithoutVmClass(*matrix, session.path, VmDeviceClasses(hosts[0]));
    if (!missing.empty()) {
      err << missing;
      return 1;
    }
  }
  if (geteuid() != 0) {
    err << who << "needs root: "
        << (in_vms ? "its guests read the host's file system as root, and it journals in "
                   : "it opens the devices exclusively, changes their queue settings and "
                     "cgroups, and journals the originals in ")
        << options.state_dir << "\n";
    return 1;
  }

  // The agent's configuration for this one process: the --device list is the allowlist,
  // or the --vm guests are its VM test hosts (their files under <state_dir>/vms).
  AgentConfig config;
  config.agent_id = "local";
  config.state_dir = options.state_dir;
  config.cgroup_parent = kRunCgroupParent;
  config.sim_devices.clear();
  config.vm_hosts = hosts;
  std::map<std::string, int> seen;
  for (const std::string& arg : options.devices) {
    AllowedDevice d = ParseDevice(arg);
    if (seen[d.path]++ > 0) {
      err << who << "--device " << d.path << " is given twice\n";
      return 2;
    }
    config.devices.push_back(std::move(d));
  }

  // A run that died mid-way (kill -9, power cut) left its settings journaled: put the host
  // back first, as an agent does at start.
  mkdir(options.state_dir.c_str(), 0700);
  auto journal = QueueSettingsJournal::Open(options.state_dir);
  if (!journal.ok()) {
    err << who << "state dir: " << journal.status().message() << "\n";
    return 1;
  }
  absl::StatusOr<RecoveryReport> recovered = (*journal)->RecoverAll();
  if (!recovered.ok() || !recovered->ok()) {
    err << who << "restoring what an interrupted run left in " << options.state_dir << ": "
        << (recovered.ok() ? absl::StrJoin(recovered->failed, "; ")
                           : std::string(recovered.status().message()))
        << "\n";
    return 1;
  }
  for (const std::string& r : recovered->restored) {
    if (!session.quiet) err << who << "restored " << r << " left by an interrupted run\n";
  }

  std::optional<WarningsOnly> quiet_log;
  if (in_vms) quiet_log.emplace();
  // On every return from here on the executor's destructor powers the guests off and
  // removes <state_dir>/vms. The signal canceller, declared after it, is gone before it:
  // its hook never reaches a destroyed executor.
  RunExecutor executor(config, **journal, DefaultRunnerFactory());
  std::atomic<bool> cancel{false};
  SignalCanceller signals(
      cancel, who,
      in_vms ? "stopping the run and powering the guests off"
             : "stopping the run and restoring the device",
      in_vms ? std::function<void()>([&executor] { executor.vm_hosts().AbortBoots(); }) : nullptr);
  std::ostringstream discard;
  std::ostream& progress = session.quiet ? discard : err;
  if (in_vms) {
    progress << who << "booting " << hosts.size() << " guest" << (hosts.size() == 1 ? "" : "s")
             << " (" << hosts[0].vcpus << " vCPUs, " << hosts[0].memory_mb << " MiB; devices "
             << absl::StrJoin(options.vm.vms, ", ") << ")\n";
  }
  DeviceOffer offer = executor.OfferDevices();  // reads facts, records identities; boots
  if (cancel.load()) {
    err << who << "interrupted while the guests booted: nothing ran, nothing was stored\n";
    return 1;
  }
  for (const auto& [path, why] : offer.not_offered) {
    err << who << (in_vms ? "" : "--device ") << path << KernelOf(hosts, path) << ": " << why
        << "\n";
  }
  if (!offer.not_offered.empty()) return 1;

  // Two or more guests: every cell on each of their kernels, `kernel` its first axis.
  std::vector<std::string> releases;
  bool kernel_axis = false;  // added by WithKernelAxis
  if (in_vms) {
    releases = GuestReleases(hosts, offer, progress, who);
    for (size_t i = 0; i < releases.size(); ++i) {
      for (size_t j = 0; j < i; ++j) {
        if (releases[i] != releases[j]) continue;
        err << who << "--kernel " << hosts[j].kernel << " and --kernel " << hosts[i].kernel
            << " both booted " << releases[i] << ": give kernels that differ\n";
        return 1;
      }
    }
    const size_t before = matrix->cells.size(), axes = matrix->axes.size();
    matrix = std::make_shared<const workloads::Matrix>(WithKernelAxis(*matrix, releases));
    kernel_axis = matrix->axes.size() != axes;
    if (kernel_axis) {
      progress << who << "kernel axis: " << before << " cell" << (before == 1 ? "" : "s") << " x "
               << releases.size() << " kernels = " << matrix->cells.size() << " cells\n";
    }
  }
  const workloads::Matrix& m = *matrix;

  // Wrong-disk protection before anything is stored or written: each device is checked
  // (and briefly held O_EXCL) as every run checks it again.
  std::vector<AllowlistEntry> allowlist;
  for (const AllowedDevice& d : config.devices) allowlist.push_back({d.path, d.device_class});
  bool refused = false;
  for (const AllowedDevice& d : config.devices) {
    absl::StatusOr<ExclusiveHold> hold = PrepareExclusiveWrite(allowlist, d.path);
    if (!hold.ok()) {
      err << who << "refused: " << hold.status().message() << "\n";
      refused = true;
    }
  }
  if (refused) return 1;

  // Every cell must match a device: its class (detected, or PATH=CLASS) and kernel glob
  // (a guest's device: the guest's release).
  v1::AgentInfo here;
  *here.mutable_host() = ReadHostFacts();
  for (const v1::DeviceFacts& f : offer.offered) *here.add_devices() = f;
  std::vector<std::vector<std::string>> candidates(m.cells.size());
  std::vector<std::string> offered;
  for (const v1::DeviceFacts& f : offer.offered) offered.push_back(Describe(f));
  int unmatched = 0;
  for (const v1::CellSpec& cell : m.cells) {
    for (const v1::DeviceFacts& f : offer.offered) {
      if (DeviceMatches(cell, here, f)) candidates[cell.index()].push_back(f.path());
    }
    if (!candidates[cell.index()].empty()) continue;
    ++unmatched;
    const std::string& cls = cell.target().device_class();
    err << session.path << ": cell " << cell.index() << " (" << workloads::CellLabel(cell)
        << ") targets device class '" << cls << "'";
    if (in_vms) {
      // (Its class is there: checked before the boots.)
      err << " on kernel '" << cell.target().kernel()
          << "', which no guest runs; the guests' devices: " << absl::StrJoin(offered, ", ")
          << ". Boot a kernel it matches with --kernel (e.g. --kernel deb:"
          << cell.target().kernel() << ")\n";
      continue;
    }
    if (!cell.target().kernel().empty()) {
      err << " on kernel '" << cell.target().kernel() << "' (this host runs "
          << here.host().kernel_release() << ")";
    }
    err << "; the devices given: " << absl::StrJoin(offered, ", ") << ". To run it on "
        << offer.offered[0].path() << " anyway, give --device " << offer.offered[0].path() << "="
        << cls << "\n";
  }
  if (unmatched > 0) return 1;

  LocalRunner runner;
  // Runs go one at a time; a cell with several matching devices takes them in turn.
  runner.place = [&candidates](const v1::CellSpec& cell, uint64_t run_id) {
    const std::vector<std::string>& c = candidates[cell.index()];
    return c[run_id % c.size()];
  };
  // The executor answers as it answers the controller: its RunFinished is the session's.
  runner.execute =
      [&](const v1::RunAssignment& a, const std::function<void(const v1::Sample&)>& on_sample,
          std::ostream* trace) { return executor.Execute(a, cancel, on_sample, trace); };
  runner.extra_tables = PrintDeviceTable;
  uint64_t experiment = 0;
  session.matrix = matrix;
  session.on_results = [&experiment, &options](const v1::GetResultsResponse& results) {
    experiment = results.experiment().id();
    if (options.session.on_results) options.session.on_results(results);
  };
  const int rc = RunLocalExperiment(session, runner, &cancel, out, err);
  if (kernel_axis && experiment != 0) {
    progress << who << "compare the kernels: blkbench gate --db "
             << RedactedStoreName(session.db_path) << " --experiment " << experiment
             << " --axis kernel --baseline " << releases[0] << " --candidate " << releases[1]
             << "\n";
  }
  if (in_vms && !session.quiet) progress << who << "powering the guests off\n";
  return rc;
}

RunOptions RunOptionsFromArgs(const Args& a) {
  return {.session = SessionOptionsFromArgs(a, "run", kDefaultRunDb),
          .devices = a.All("device"),
          .vm = {.vms = a.All("vm"),
                 .kernels = a.All("kernel"),
                 .vcpus = a.Get("vcpus"),
                 .memory = a.Get("memory")},
          .state_dir = a.Get("state-dir", kDefaultRunStateDir)};
}

CommandSpec RunCommand() {
  return {
      .name = "run",
      .args = {"FILE"},
      .summary = "run a matrix on this machine's own devices or in qemu guests, no daemons",
      .description =
          "The devices given with --device are the only ones it may touch (PATH=CLASS "
          "overrides the class detected from sysfs). Before anything is written each is "
          "checked as an agent checks an allowlisted device (not mounted, no partitions, "
          "holders, swap or signature; held O_EXCL during each run; its identity re-checked), "
          "and every cell must match a device's class and the host's kernel. Queue settings "
          "and cgroups are journaled in --state-dir and restored after each run, on Ctrl-C, "
          "and at the next start after a crash. Results go to --db, which results, report, "
          "gate and history read with --db. Needs root. Progress on stderr, results on stdout "
          "(docs/run.md). With --vm and --kernel instead of --device, it boots one qemu guest "
          "per --kernel with every --vm device, runs each cell in them (on every kernel, as a "
          "kernel axis, when there are several) and powers them off at the end, Ctrl-C "
          "included (docs/vm-hosts.md).",
      .flags =
          {{"device", "PATH", "a device (or file) it may use, PATH[=CLASS]; repeat for more"},
           {"vm", "KIND[:SPEC]",
            "a guest device: null_blk, nvme, hdd or virtio; SPEC size=1g,queues=N,class=C "
            "(null_blk: none); repeat for more"},
           {"kernel", "SPEC",
            "a guest's kernel, deb:GLOB or PATH/bzImage[:MODULES_DIR]; repeat to compare "
            "kernels"},
           {"vcpus", "N", "each guest's vCPUs (default 2)"},
           {"memory", "SIZE", "each guest's memory (default 2g)"},
           {"db", "FILE",
            "the local store to write (default ./blkbench.db; or a postgresql:// URI)"},
           {"state-dir", "DIR", "journal of original settings (default /var/lib/blkbench-run)"},
           {"trace", "FILE",
            "write every run's Q/G/I/D/C block events, blkparse-style (implies trace: 1)"},
           {"report", "FILE", "also write the experiment's HTML report (as blkbench report)"},
           {"format", "FORMAT", "output format", {"table", "csv", "json", "fio-json", "fio-json+"}},
           FioLogsFlag(),
           {"quiet", "", "no progress lines", {}, 'q'}},
      .check = CheckMatrix,
      .run = [](const Args& a, Client*, std::ostream& out, std::ostream& err) {
        return RunOnDevices(RunOptionsFromArgs(a), out, err);
      }};
}

}  // namespace blkbench
