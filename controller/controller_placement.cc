// Controller, placement: the in-memory queue of queued runs (queue_, a RunQueue) and the
// pass that matches it against free devices, driven by events rather than by ticks.
#include <sys/random.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <set>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "common/log/log.h"
#include "common/placement.h"
#include "controller/controller.h"

namespace blkbench {
namespace {

LogEvent Warn(absl::string_view event) { return LogEvent(LogLevel::kWarning, "controller", event); }
LogEvent Info(absl::string_view event) { return LogEvent(LogLevel::kInfo, "controller", event); }

// A pass with at least this many free devices reads an experiment of at most
// kWholeReadPerDevice runs per free device whole, rather than run by run.
constexpr size_t kWholeReadMinDevices = 16;
constexpr uint64_t kWholeReadPerDevice = 4;

// 128 bits from the kernel's CSPRNG (getrandom), hex: a lease id cannot be guessed, so a
// client that is not the lease's agent cannot forge its samples or result.
std::string NewLeaseId() {
  unsigned char bytes[16];
  size_t got = 0;
  while (got < sizeof(bytes)) {
    const ssize_t n = getrandom(bytes + got, sizeof(bytes) - got, 0);
    if (n > 0) got += static_cast<size_t>(n);
  }
  return absl::StrCat("L", absl::BytesToHexString(absl::string_view(
                               reinterpret_cast<const char*>(bytes), sizeof(bytes))));
}

}  // namespace

absl::StatusOr<const std::vector<v1::CellSpec>*> Controller::CellsOf(uint64_t experiment_id) {
  auto it = cells_.find(experiment_id);
  if (it != cells_.end()) return &it->second;
  auto exp = store_.GetExperiment(experiment_id, false);
  if (!exp.ok()) return exp.status();
  std::vector<v1::CellSpec>& cells = cells_[experiment_id];
  cells.assign(exp->cells().begin(), exp->cells().end());
  return &cells;
}

void Controller::Enqueue(uint64_t run_id, uint64_t experiment_id, uint32_t cell_index) {
  auto cells = CellsOf(experiment_id);
  if (!cells.ok()) {
    Warn("queue_cells_failed")
        .Field("experiment", experiment_id)
        .Field("error", cells.status().ToString());
    unqueued_experiments_.insert(experiment_id);
    return;
  }
  if (cell_index >= (*cells)->size()) return;  // no such cell: it can never run
  queue_.Add(PlacementKey::Of((**cells)[cell_index]), QueuedRun{run_id, experiment_id, cell_index});
  placement_due_ = true;
}

void Controller::EnqueueRunsOf(const v1::Experiment& exp) {
  auto cells = CellsOf(exp.id());
  if (!cells.ok()) {
    Warn("queue_cells_failed")
        .Field("experiment", exp.id())
        .Field("error", cells.status().ToString());
    unqueued_experiments_.insert(exp.id());
    return;
  }
  std::vector<PlacementKey> keys;  // by cell index: one key per cell, not per run
  for (const v1::CellSpec& cell : **cells) keys.push_back(PlacementKey::Of(cell));
  for (const v1::Run& run : exp.runs()) {
    if (run.state() != v1::RUN_QUEUED || run.cell_index() >= keys.size()) continue;
    queue_.Add(keys[run.cell_index()], QueuedRun{run.id(), exp.id(), run.cell_index()});
    placement_due_ = true;
  }
}

std::vector<uint64_t> Controller::PlaceQueuedRuns(Outbox& out) {
  placement_due_ = false;
  // Metrics: how long a pass takes (store reads and writes under the lock) and what it
  // placed. A steady clock, not clock_: this measures real latency, never a timeout.
  const auto pass_start = std::chrono::steady_clock::now();
  std::vector<v1::Run> placed;
  std::vector<uint64_t> experiments;
  struct Report {
    ControllerObserver* observer;
    const std::chrono::steady_clock::time_point& start;
    const std::vector<v1::Run>& placed;
    ~Report() {
      if (observer == nullptr) return;
      observer->OnPlacement(
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), placed);
    }
  } report{observer_, pass_start, placed};
  if (queue_.size() == 0) return experiments;
  // Free devices in placement order — agents in name order, devices in registration
  // order: deterministic; one run per device at a time spreads an experiment over every
  // matching device. Built once per pass (a scan of leases_ per device considered made
  // placing N runs on N agents O(N^3)).
  std::set<std::pair<std::string, std::string>> busy;
  for (const auto& [run_id, lease] : leases_) busy.emplace(lease.agent_id, lease.device_path);
  struct Candidate {
    const std::string* agent_id;
    AgentState* agent;
    const v1::DeviceFacts* device;
  };
  std::vector<Candidate> free;
  std::vector<FreeDevice> offered;
  for (auto& [agent_id, agent] : agents_) {
    if (agent.link == nullptr || agent.silent) continue;
    for (const v1::DeviceFacts& dev : agent.info.devices()) {
      if (busy.count({agent_id, dev.path()})) continue;
      free.push_back({&agent_id, &agent, &dev});
      offered.push_back({&dev.device_class(), &DeviceKernelRelease(agent.info, dev)});
    }
  }
  // No free device (every agent busy, or none connected): nothing to match.
  if (free.empty()) return experiments;
  // Each run the queue picks is read back first: the store, not the queue, says it is
  // still queued, and gives its attempt and repeat.
  std::vector<v1::Run> runs;
  std::vector<const v1::CellSpec*> cells;
  // A pass with many free devices may place much of a small experiment (a lab's agents
  // taking a fresh submit): then one read of the whole experiment replaces a read per
  // run, when the experiment is no bigger than a few times the free devices.
  std::map<uint64_t, std::map<uint64_t, v1::Run>> read_whole;  // experiment → its runs
  std::set<uint64_t> read_singly;
  auto read_run = [&](const QueuedRun& q) -> absl::StatusOr<v1::Run> {
    if (free.size() >= kWholeReadMinDevices && !read_singly.count(q.experiment_id)) {
      auto whole = read_whole.find(q.experiment_id);
      if (whole == read_whole.end()) {
        auto progress = store_.GetExperimentProgress(q.experiment_id);
        auto exp = progress.ok() && progress->runs <= kWholeReadPerDevice * free.size()
                       ? store_.GetExperiment(q.experiment_id, false)
                       : absl::StatusOr<v1::Experiment>(absl::CancelledError("not read whole"));
        if (exp.ok()) {
          std::map<uint64_t, v1::Run>& by_id = read_whole[q.experiment_id];
          for (v1::Run& r : *exp->mutable_runs()) by_id.emplace(r.id(), std::move(r));
          whole = read_whole.find(q.experiment_id);
        } else {
          read_singly.insert(q.experiment_id);
        }
      }
      if (whole != read_whole.end()) {
        auto it = whole->second.find(q.run_id);
        if (it == whole->second.end()) return absl::NotFoundError("run not in its experiment");
        return it->second;
      }
    }
    return store_.GetRun(q.run_id);
  };
  const std::vector<RunQueue::Pick> picks =
      queue_.Choose(offered, [&](const QueuedRun& q) -> RunQueue::Verdict {
        auto stop = [&](const absl::Status& s) {
          Warn("place_read_failed").Field("run", q.run_id).Field("error", s.ToString());
          placement_due_ = true;  // the next tick tries again
          return RunQueue::Verdict::kStop;
        };
        auto run = read_run(q);
        if (absl::IsNotFound(run.status())) return RunQueue::Verdict::kGone;
        if (!run.ok()) return stop(run.status());
        auto of = CellsOf(q.experiment_id);
        if (!of.ok()) return stop(of.status());
        if (run->state() != v1::RUN_QUEUED || q.cell_index >= (*of)->size()) {
          return RunQueue::Verdict::kGone;
        }
        runs.push_back(*std::move(run));
        cells.push_back(&(**of)[q.cell_index]);
        return RunQueue::Verdict::kTake;
      });
  if (picks.empty()) return experiments;
  for (size_t i = 0; i < picks.size(); ++i) {
    v1::Run& run = runs[i];
    const Candidate& where = free[picks[i].device];
    run.set_attempt(run.attempt() + 1);
    run.set_state(v1::RUN_ASSIGNED);
    run.set_agent_id(*where.agent_id);
    run.set_device_path(where.device->path());
    run.set_lease_id(NewLeaseId());
    run.set_started_unix_ms(clock_.WallMs());
    run.set_error("");
  }
  // Committed (one transaction for the pass) before anything in memory changes or an
  // agent hears of it; a run that could not be written stays queued for the next pass.
  const RunsWritten written = store_.UpdateRuns(runs);
  if (!written.status.ok()) {
    Warn("assign_store_failed")
        .Field("run", runs[written.count].id())
        .Field("error", written.status.ToString());
    placement_due_ = true;
  }
  for (size_t i = 0; i < written.count; ++i) {
    const v1::Run& run = runs[i];
    const Candidate& where = free[picks[i].device];
    queue_.Remove(picks[i].key, run.id());
    v1::ControllerMessage msg;
    v1::RunAssignment* a = msg.mutable_assign();
    a->set_run_id(run.id());
    a->set_attempt(run.attempt());
    a->set_lease_id(run.lease_id());
    a->set_experiment_id(run.experiment_id());
    a->set_device_path(run.device_path());
    *a->mutable_cell() = *cells[i];
    a->set_sample_interval_ms(options_.sample_interval_ms);
    a->set_repeat(run.repeat());
    const int64_t now = clock_.MonotonicMs();
    Lease& lease = leases_[run.id()];
    lease = Lease{};
    lease.agent_id = run.agent_id();
    lease.instance_id = where.agent->instance_id;
    lease.device_path = run.device_path();
    lease.lease_id = run.lease_id();
    lease.attempt = run.attempt();
    lease.expires_ms = now + options_.lease_ttl_ms;
    lease.run = run;
    lease.assignment = msg;
    lease.sent_ms = now;
    Info("run_assigned")
        .Field("run", run.id())
        .Field("attempt", run.attempt())
        .Field("agent", run.agent_id())
        .Field("device", run.device_path());
    if (std::find(experiments.begin(), experiments.end(), run.experiment_id()) ==
        experiments.end()) {
      experiments.push_back(run.experiment_id());
    }
    out.emplace_back(where.agent->link, std::move(msg));
    placed.push_back(run);
  }
  for (uint64_t id : experiments) SyncExperimentState(id);  // QUEUED → RUNNING
  return experiments;
}

}  // namespace blkbench
