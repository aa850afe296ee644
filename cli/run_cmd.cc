// `blkbench run FILE --device PATH...`: the agent's run path on local devices inside the
// daemon-less loop of `blkbench sim`; see run_cmd.h.
#include "cli/run_cmd.h"

#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <map>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "agent/config.h"
#include "agent/device/host_facts.h"
#include "agent/device/queue_settings.h"
#include "agent/device/safety.h"
#include "agent/run_executor.h"
#include "agent/runners.h"
#include "cli/format.h"
#include "cli/local_run.h"
#include "common/placement.h"
#include "common/resolved_job.h"
#include "workloads/format.h"

namespace blkbench {
namespace {

// SIGINT and SIGTERM, for as long as it lives, set `cancel` instead of ending the process,
// so the running run stops through the executor's cancel path and its device is restored.
// The signals are blocked in every thread started meanwhile (the executor's jobs
// included) and taken by one thread with sigwait; the old mask comes back at the end.
class SignalCanceller {
 public:
  SignalCanceller(std::atomic<bool>& cancel, std::string who) : who_(std::move(who)) {
    sigemptyset(&set_);
    sigaddset(&set_, SIGINT);
    sigaddset(&set_, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set_, &old_);
    thread_ = std::thread([this, &cancel] {
      for (;;) {
        int sig = 0;
        if (sigwait(&set_, &sig) != 0) continue;
        if (done_.load()) return;
        // write(2), not the CLI's stream: the main thread may be writing to it.
        const std::string msg =
            cancel.exchange(true)
                ? absl::StrCat(who_, "still stopping and restoring the device, please wait\n")
                : absl::StrCat(who_, strsignal(sig),
                               ": stopping the run and restoring the device\n");
        (void)!write(STDERR_FILENO, msg.data(), msg.size());
      }
    });
  }
  ~SignalCanceller() {
    done_.store(true);
    // Not to end the thread: SIGTERM is blocked and sigwait() takes it as the wake-up.
    pthread_kill(thread_.native_handle(), SIGTERM);  // NOLINT(bugprone-bad-signal-to-kill-thread)
    thread_.join();
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }
  SignalCanceller(const SignalCanceller&) = delete;
  SignalCanceller& operator=(const SignalCanceller&) = delete;

 private:
  const std::string who_;  // "blkbench run: "
  sigset_t set_, old_;
  std::atomic<bool> done_{false};
  std::thread thread_;
};

// "PATH" or "PATH=CLASS" (a class overrides detection, as `class:` in agent.yaml does).
AllowedDevice ParseDevice(const std::string& arg) {
  const size_t eq = arg.rfind('=');
  if (eq == std::string::npos || arg.find('/', eq) != std::string::npos) return {arg, ""};
  return {arg.substr(0, eq), arg.substr(eq + 1)};
}

// The block layer's and the device's own account of each run: diskstats over the run
// (iostat -x) and, for `trace: 1` cells, the tracepoint summary (seed 001's metric).
void PrintDeviceTable(const v1::GetResultsResponse& results, std::ostream& out) {
  bool traced = false;
  for (const v1::ResultRow& row : results.rows()) {
    traced |= row.run().result().internals().count("seq_ratio") > 0;
  }
  std::vector<std::string> header = {"run",        "axes",       "device", "util%", "aqu-sz",
                                     "r_await_ms", "w_await_ms", "rrqm",   "wrqm"};
  if (traced) {
    for (const char* h : {"seq_ratio", "inflight_mean", "inflight_max", "inversions", "merges",
                          "splits", "requeues"}) {
      header.emplace_back(h);
    }
  }
  TextTable t(header);
  auto fixed = [](double v, int digits) {
    char buf[32];
    snprintf(buf, sizeof(buf), "%.*f", digits, v);
    return std::string(buf);
  };
  for (const v1::ResultRow& row : results.rows()) {
    if (row.run().state() != v1::RUN_DONE) continue;
    const v1::RunResult& r = row.run().result();
    const v1::DeviceStats& d = r.device_stats();
    std::vector<std::string> cells = {absl::StrCat(row.run().id()),
                                      workloads::CellLabel(row.cell()), row.run().device_path()};
    if (r.has_device_stats()) {
      for (const std::string& v :
           {fixed(d.util_pct(), 1), fixed(d.aqu_sz(), 2), fixed(d.r_await_ms(), 3),
            fixed(d.w_await_ms(), 3), absl::StrCat(d.reads_merged()),
            absl::StrCat(d.writes_merged())}) {
        cells.push_back(v);
      }
    } else {
      cells.insert(cells.end(), 6, "-");  // a regular file has no device counters
    }
    if (traced) {
      auto get = [&r](const std::string& key) -> std::string {
        auto it = r.internals().find(key);
        if (it == r.internals().end()) return "-";
        const int digits = key == "seq_ratio" ? 3 : key == "device.inflight_mean" ? 2 : 0;
        char buf[32];
        snprintf(buf, sizeof(buf), "%.*f", digits, it->second);
        return buf;
      };
      for (const char* key :
           {"seq_ratio", "device.inflight_mean", "trace.inflight_max", "trace.inversions",
            "trace_merged", "trace.splits", "dispatch.requeues"}) {
        cells.push_back(get(key));
      }
    }
    t.AddRow(cells);
  }
  out << "\nthe device during each run (/proc/diskstats"
      << (traced ? "; block-layer tracepoints for trace: 1 cells" : "") << ")\n"
      << t.ToString();
}

}  // namespace

int RunOnDevices(const RunOptions& options, std::ostream& out, std::ostream& err) {
  const std::string who = absl::StrCat("blkbench ", options.command, ": ");
  std::shared_ptr<const workloads::Matrix> matrix = options.matrix;
  if (!options.trace_path.empty()) {
    // --trace is a request to trace: every cell traced (trace: 1), as stored with its
    // results, so that a cell's numbers always say whether tracing was on while they ran.
    auto traced = std::make_shared<workloads::Matrix>(*options.matrix);
    int turned_on = 0;
    for (v1::CellSpec& cell : traced->cells) {
      if (cell.trace() > 0) continue;
      cell.set_trace(1);
      ++turned_on;
    }
    if (turned_on > 0 && !options.quiet) {
      err << who << "--trace: block tracing " << turned_on << " cell" << (turned_on == 1 ? "" : "s")
          << " without trace: 1 as well (stored as trace: 1)\n";
    }
    matrix = std::move(traced);
  }
  const workloads::Matrix& m = *matrix;
  if (options.devices.empty()) {
    err << who << "give the devices to run on with --device PATH (one per device)\n";
    return 2;
  }
  for (const v1::CellSpec& cell : m.cells) {
    if (IsSimulated(cell.target().device_class())) {
      err << options.path << ": cell " << cell.index() << " (" << workloads::CellLabel(cell)
          << ") has the simulated class '" << cell.target().device_class()
          << "'; run simulated cells with blkbench sim\n";
      return 1;
    }
  }
  if (geteuid() != 0) {
    err << who
        << "needs root: it opens the devices exclusively, changes their queue "
           "settings and cgroups, and journals the originals in "
        << options.state_dir << "\n";
    return 1;
  }

  // The agent's configuration for this one process: the --device list is the allowlist.
  AgentConfig config;
  config.agent_id = "local";
  config.state_dir = options.state_dir;
  config.cgroup_parent = kRunCgroupParent;
  config.sim_devices.clear();
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
    if (!options.quiet) err << who << "restored " << r << " left by an interrupted run\n";
  }

  RunExecutor executor(config, **journal, DefaultRunnerFactory());
  DeviceOffer offer = executor.OfferDevices();  // reads facts, records identities
  for (const auto& [path, why] : offer.not_offered) {
    err << who << "--device " << path << ": " << why << "\n";
  }
  if (!offer.not_offered.empty()) return 1;

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

  // Every cell must match a device: its class (detected, or PATH=CLASS) and kernel glob.
  v1::AgentInfo here;
  *here.mutable_host() = ReadHostFacts();
  for (const v1::DeviceFacts& f : offer.offered) *here.add_devices() = f;
  std::vector<std::vector<std::string>> candidates(m.cells.size());
  std::vector<std::string> offered;
  for (const v1::DeviceFacts& f : offer.offered) {
    offered.push_back(absl::StrCat(f.path(), " (", f.device_class(),
                                   f.device_class() == f.detected_class() ? ", detected" : "",
                                   ")"));
  }
  int unmatched = 0;
  for (const v1::CellSpec& cell : m.cells) {
    for (const v1::DeviceFacts& f : offer.offered) {
      if (DeviceMatches(cell, here, f)) candidates[cell.index()].push_back(f.path());
    }
    if (!candidates[cell.index()].empty()) continue;
    ++unmatched;
    const std::string& cls = cell.target().device_class();
    err << options.path << ": cell " << cell.index() << " (" << workloads::CellLabel(cell)
        << ") targets device class '" << cls << "'";
    if (!cell.target().kernel().empty()) {
      err << " on kernel '" << cell.target().kernel() << "' (this host runs "
          << here.host().kernel_release() << ")";
    }
    err << "; the devices given: " << absl::StrJoin(offered, ", ") << ". To run it on "
        << offer.offered[0].path() << " anyway, give --device " << offer.offered[0].path() << "="
        << cls << "\n";
  }
  if (unmatched > 0) return 1;

  std::atomic<bool> cancel{false};
  SignalCanceller signals(cancel, who);
  LocalRunner runner;
  // Runs go one at a time; a cell with several matching devices takes them in turn.
  runner.place = [&candidates](const v1::CellSpec& cell, uint64_t run_id) {
    const std::vector<std::string>& c = candidates[cell.index()];
    return c[run_id % c.size()];
  };
  runner.execute = [&](const LocalRun& r) -> absl::StatusOr<v1::RunResult> {
    v1::RunAssignment a;
    a.set_run_id(r.run.id());
    a.set_attempt(r.run.attempt());
    a.set_lease_id("local");
    *a.mutable_cell() = r.cell;
    a.set_repeat(r.run.repeat());
    a.set_device_path(r.run.device_path());
    a.set_sample_interval_ms(1000);
    v1::RunFinished f = executor.Execute(a, cancel, r.on_sample, r.trace);
    switch (f.outcome()) {
      case v1::RUN_OUTCOME_SUCCEEDED:
        return std::move(*f.mutable_result());
      case v1::RUN_OUTCOME_CANCELED:
        return absl::CancelledError(f.error());
      default:
        return absl::AbortedError(f.error());
    }
  };
  runner.extra_tables = PrintDeviceTable;
  return RunLocalExperiment({.command = options.command,
                             .path = options.path,
                             .db_path = options.db_path,
                             .trace_path = options.trace_path,
                             .format = options.format,
                             .report_path = options.report_path,
                             .quiet = options.quiet,
                             .matrix = matrix,
                             .matrix_text = options.matrix_text,
                             .cancel = &cancel,
                             .on_results = options.on_results},
                            runner, out, err);
}

}  // namespace blkbench
