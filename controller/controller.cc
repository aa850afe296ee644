// Controller: experiment lifecycle, placement of runs on agents' devices, leases.
#include "controller/controller.h"

#include <algorithm>
#include <cstdio>

#include "absl/strings/str_cat.h"
#include "common/log/log.h"
#include "common/run_order.h"
#include "common/states.h"
#include "controller/experiment_lifecycle.h"
#include "controller/gate/history.h"
#include "workloads/matrix.h"

namespace blkbench {
namespace {}  // namespace

Controller::Controller(Store& store, Clock& clock, ControllerOptions options,
                       ControllerObserver* observer)
    : store_(store),
      clock_(clock),
      options_(options),
      observer_(observer),
      batcher_(ReportBatcherOptions{.window_ms = options.commit_window_ms,
                                    .max_reports = options.commit_max_reports,
                                    .max_pending = 20'000},
               [this](std::vector<PendingReport>& batch) { CommitReports(batch); }) {}

absl::Status Controller::Start() {
  absl::MutexLock lock(&mu_);
  // The only read of every queued run: from here on queue_ follows each transition.
  auto unended = store_.ListRunsInStates({v1::RUN_QUEUED, v1::RUN_ASSIGNED, v1::RUN_RUNNING});
  if (!unended.ok()) return unended.status();
  const int64_t expires = clock_.MonotonicMs() + options_.lease_ttl_ms;
  for (const v1::Run& run : *unended) {
    if (run.state() == v1::RUN_QUEUED) {
      Enqueue(run.id(), run.experiment_id(), run.cell_index());
      continue;
    }
    Lease& lease = leases_[run.id()];
    lease.agent_id = run.agent_id();
    lease.device_path = run.device_path();
    lease.lease_id = run.lease_id();
    lease.attempt = run.attempt();
    lease.expires_ms = expires;
    lease.delivered = true;  // unknown; an agent that does not report it loses it
    lease.run = run;
  }
  auto exps = store_.ListExperiments(0);
  if (!exps.ok()) return exps.status();
  for (const v1::Experiment& e : *exps) {
    if (IsEndedExperimentState(e.state())) continue;  // nothing to remember of it
    if (!e.canceled_by().empty()) canceled_.insert(e.id());
    // A previous process may have died between a run's final write and the
    // experiment's: the first Tick brings every unended experiment up to date.
    unsynced_experiments_.insert(e.id());
  }
  return absl::OkStatus();
}

absl::StatusOr<v1::Experiment> Controller::Submit(
    const std::string& file_name, const std::string& matrix_text, const std::string& submitted_by,
    const Deadline& deadline, std::map<std::string, std::string> machine_files) {
  // Machine profile files come only from the submitter (the CLI read them): this process
  // never opens a path from a matrix.
  auto matrix = workloads::ParseMatrix(
      matrix_text, file_name,
      workloads::ParseOptions{.read_machine_file =
                                  workloads::AttachedMachineFiles(std::move(machine_files))});
  if (!matrix.ok()) return matrix.status();
  if (absl::Status s = deadline.Check("storing the experiment"); !s.ok()) return s;
  const uint64_t runs = static_cast<uint64_t>(matrix->cells.size()) * matrix->repeats;
  if (runs > options_.max_runs_per_experiment) {
    return absl::InvalidArgumentError(absl::StrCat(
        file_name, ": ", matrix->cells.size(), " cells x ", matrix->repeats, " repeats = ", runs,
        " runs; this controller takes at most ", options_.max_runs_per_experiment,
        " per experiment (--max_runs); split the matrix or lower repeats"));
  }
  const v1::Experiment exp =
      NewExperiment(*matrix, file_name, matrix_text, submitted_by, clock_.WallMs());
  uint64_t id = 0;
  {
    absl::MutexLock lock(&mu_);
    auto created = store_.CreateExperiment(exp);  // one transaction for all its runs
    if (!created.ok()) return created.status();
    id = *created;
    cells_[id] = matrix->cells;
  }
  // The new runs' ids, read without the lock (the answer needs them anyway); nothing
  // places them before they are queued below.
  auto stored = store_.GetExperiment(id, false);
  Outbox out;
  {
    absl::MutexLock lock(&mu_);
    if (!stored.ok()) {
      unqueued_experiments_.insert(id);  // Tick reads it again
    } else if (cells_.count(id)) {       // else it ended meanwhile (canceled)
      EnqueueRunsOf(*stored);
    }
    const std::vector<uint64_t> touched = PlaceQueuedRuns(out);
    if (stored.ok() && std::find(touched.begin(), touched.end(), id) != touched.end()) {
      // The answer shows the runs just placed as assigned (as written), and the state
      // they moved the experiment to, without reading every run again.
      for (v1::Run& run : *stored->mutable_runs()) {
        auto lease = leases_.find(run.id());
        if (lease != leases_.end()) run = lease->second.run;
      }
      auto progress = store_.GetExperimentProgress(id);
      if (progress.ok()) stored->set_state(progress->state);
    }
    Changed();
  }
  Flush(out);
  if (stored.ok()) return stored;
  return GetExperiment(id, false);
}

absl::StatusOr<v1::Experiment> Controller::GetExperiment(uint64_t id, bool with_results,
                                                         const Deadline& deadline) {
  auto exp = store_.GetExperiment(id, with_results);
  if (!exp.ok()) return exp.status();
  if (absl::Status s = deadline.Check("sending the experiment"); !s.ok()) return s;
  return exp;
}

absl::StatusOr<std::vector<v1::Experiment>> Controller::ListExperiments(uint32_t limit,
                                                                        const Deadline& deadline) {
  auto exps = store_.ListExperiments(limit);
  if (!exps.ok()) return exps.status();
  if (absl::Status s = deadline.Check("sending the experiments"); !s.ok()) return s;
  return exps;
}

absl::StatusOr<v1::Experiment> Controller::Cancel(uint64_t id, const std::string& canceled_by) {
  Outbox out;
  {
    absl::MutexLock lock(&mu_);
    auto exp = store_.GetExperiment(id, false);
    if (!exp.ok()) return exp.status();
    if (exp->state() == v1::EXPERIMENT_DONE || exp->state() == v1::EXPERIMENT_FAILED ||
        exp->state() == v1::EXPERIMENT_CANCELED) {
      return absl::FailedPreconditionError(absl::StrCat(
          "experiment ", id, " has already ended (", v1::ExperimentState_Name(exp->state()), ")"));
    }
    if (absl::Status s = store_.RecordCancel(id, canceled_by); !s.ok()) return s;
    canceled_.insert(id);
    const int64_t now = clock_.WallMs();
    for (const v1::Run& run : exp->runs()) {
      if (run.state() == v1::RUN_QUEUED) {
        absl::Status s =
            store_.FinishRun(run.id(), run.attempt(), v1::RUN_CANCELED, "canceled", now, nullptr);
        if (!s.ok()) return s;
        if (run.cell_index() < static_cast<uint32_t>(exp->cells_size())) {
          queue_.Remove(PlacementKey::Of(exp->cells(static_cast<int>(run.cell_index()))), run.id());
        }
      } else if (!IsFinalRunState(run.state())) {
        auto lease = leases_.find(run.id());
        if (lease == leases_.end()) continue;
        auto agent = agents_.find(lease->second.agent_id);
        if (agent == agents_.end() || agent->second.link == nullptr) continue;
        v1::ControllerMessage msg;
        msg.mutable_cancel()->set_run_id(run.id());
        msg.mutable_cancel()->set_attempt(run.attempt());
        msg.mutable_cancel()->set_reason("experiment canceled");
        out.emplace_back(agent->second.link, msg);
      }
    }
    SyncExperimentState(id);
    Changed();
  }
  Flush(out);
  return store_.GetExperiment(id, false);
}

absl::StatusOr<std::vector<v1::AgentInfo>> Controller::ListAgents() {
  auto stored = store_.ListAgents();
  if (!stored.ok()) return stored.status();
  absl::MutexLock lock(&mu_);
  for (v1::AgentInfo& a : *stored) {
    auto it = agents_.find(a.agent_id());
    a.set_connected(it != agents_.end() && it->second.link != nullptr);
    if (it != agents_.end()) {
      a.set_last_seen_unix_ms(it->second.info.last_seen_unix_ms());
      a.set_refused_duplicates(it->second.info.refused_duplicates());
      a.set_last_refused_peer(it->second.info.last_refused_peer());
      a.set_last_refused_unix_ms(it->second.info.last_refused_unix_ms());
      if (a.connected()) *a.mutable_not_offered() = it->second.info.not_offered();
    }
    for (const auto& [run_id, lease] : leases_) {
      if (lease.agent_id == a.agent_id()) a.add_running_run_ids(run_id);
    }
  }
  return stored;
}

absl::StatusOr<v1::GetResultsResponse> Controller::GetResults(uint64_t id, bool with_samples,
                                                              const Deadline& deadline) {
  auto exp = store_.GetExperiment(id, true);
  if (!exp.ok()) return exp.status();
  v1::GetResultsResponse resp = ResultsOf(*std::move(exp));
  for (v1::ResultRow& row : *resp.mutable_rows()) {
    if (!with_samples) break;
    const uint64_t run = row.run().id();
    if (absl::Status s = deadline.Check(absl::StrCat("reading the samples of run ", run));
        !s.ok()) {
      return s;
    }
    auto samples = store_.ListSamples(run);
    if (!samples.ok()) return samples.status();
    for (v1::Sample& s : *samples) *row.add_samples() = std::move(s);
  }
  if (absl::Status s = deadline.Check("sending the results"); !s.ok()) return s;
  return resp;
}

absl::StatusOr<v1::AddRepeatsResponse> Controller::AddRepeats(
    uint64_t id, const std::vector<uint32_t>& cell_indices, uint32_t count) {
  if (count < 1 || count > kMaxAddedRepeats) {
    return absl::InvalidArgumentError(
        absl::StrCat("repeats to add: expected 1 to ", kMaxAddedRepeats, ", got ", count));
  }
  v1::AddRepeatsResponse resp;
  Outbox out;
  {
    absl::MutexLock lock(&mu_);
    const std::string refused =
        absl::StrCat("experiment ", id, " was canceled; it takes no more runs");
    if (canceled_.count(id)) return absl::FailedPreconditionError(refused);
    auto current = store_.GetExperiment(id, false);
    if (!current.ok()) return current.status();
    // canceled_ holds only experiments still ending; one that ended canceled says so in
    // the store.
    if (current->state() == v1::EXPERIMENT_CANCELED || !current->canceled_by().empty()) {
      return absl::FailedPreconditionError(refused);
    }
    const uint64_t total =
        static_cast<uint64_t>(current->runs_size()) + uint64_t{count} * cell_indices.size();
    if (total > options_.max_runs_per_experiment) {
      return absl::InvalidArgumentError(absl::StrCat(
          "experiment ", id, " would have ", total, " runs; this controller takes at most ",
          options_.max_runs_per_experiment, " per experiment (--max_runs)"));
    }
    auto ids = store_.AddRuns(id, cell_indices, count, clock_.WallMs());
    if (!ids.ok()) return ids.status();
    // The store numbers the new runs in RunOrder over the chosen cells (store.h).
    const std::vector<RunSlot> order = RunOrder(static_cast<uint32_t>(cell_indices.size()), count);
    if (order.size() != ids->size()) {
      unqueued_experiments_.insert(id);  // not as documented: Tick reads them back
    }
    for (size_t i = 0; i < ids->size(); ++i) {
      resp.add_run_ids((*ids)[i]);
      if (order.size() == ids->size()) Enqueue((*ids)[i], id, cell_indices[order[i].cell_index]);
    }
    PlaceQueuedRuns(out);
    Changed();
  }
  Flush(out);
  auto exp = store_.GetExperiment(id, false);
  if (!exp.ok()) return exp.status();
  *resp.mutable_experiment() = *std::move(exp);
  return resp;
}

absl::StatusOr<v1::GetHistoryResponse> Controller::GetHistory(const v1::GetHistoryRequest& req,
                                                              const Deadline& deadline) {
  if (absl::Status s = gate::CheckHistoryRequest(req); !s.ok()) return s;
  auto listed = store_.ListExperiments(req.limit());
  if (!listed.ok()) return listed.status();
  std::vector<v1::Experiment> matching;
  // Newest first from the store; the history is oldest first.
  std::reverse(listed->begin(), listed->end());
  for (const v1::Experiment& listed_exp : *listed) {
    if (absl::Status s = deadline.Check(absl::StrCat("reading experiment ", listed_exp.id()));
        !s.ok()) {
      return s;
    }
    auto cells = store_.GetExperiment(listed_exp.id(), false);
    if (!cells.ok()) return cells.status();
    if (!gate::AnyCellMatches(*cells, req)) continue;
    auto full = store_.GetExperiment(listed_exp.id(), true);
    if (!full.ok()) return full.status();
    matching.push_back(*std::move(full));
  }
  return gate::BuildHistory(matching, req);
}

uint64_t Controller::WaitForChange(uint64_t seen, absl::Duration timeout) {
  absl::MutexLock lock(&mu_);
  const absl::Time deadline = absl::Now() + timeout;
  while (version_ == seen) {
    if (changed_cv_.WaitWithDeadline(&mu_, deadline)) break;
  }
  return version_;
}

void Controller::SyncExperimentState(uint64_t experiment_id) {
  // Counts, not the experiment's runs: this runs on every placement and every result.
  auto exp = store_.GetExperimentProgress(experiment_id);
  if (absl::IsNotFound(exp.status())) {
    unsynced_experiments_.erase(experiment_id);
    return;
  }
  absl::Status s = exp.status();
  if (exp.ok()) {
    const bool all_final = exp->final_runs == exp->runs;
    const bool any_started = exp->queued < exp->runs;
    const uint64_t failed = exp->failed;
    v1::ExperimentState state = exp->state;
    std::string error;
    int64_t finished = 0;
    if (all_final) {
      finished = clock_.WallMs();
      const ExperimentEnd end = EndOfExperiment(
          exp->runs, failed,
          canceled_.count(experiment_id) > 0 || exp->state == v1::EXPERIMENT_CANCELED);
      state = end.state;
      error = end.error;
    } else if (state == v1::EXPERIMENT_QUEUED && any_started) {
      state = v1::EXPERIMENT_RUNNING;
    }
    if (state != exp->state) {
      s = store_.UpdateExperimentState(experiment_id, state, error, finished);
    }
    // An ended experiment leaves the caches (CellsOf reloads its cells should repeats be
    // added): they hold only experiments with runs to place or running.
    if (s.ok() && all_final) {
      cells_.erase(experiment_id);
      canceled_.erase(experiment_id);
    }
  }
  if (s.ok()) {
    unsynced_experiments_.erase(experiment_id);
  } else {
    LogEvent(LogLevel::kWarning, "controller", "experiment_state_store_failed")
        .Field("experiment", experiment_id)
        .Field("error", s.ToString());
    unsynced_experiments_.insert(experiment_id);
  }
}

bool Controller::LeaseMatches(const std::string& agent_id, uint64_t run_id, uint32_t attempt,
                              const std::string& lease_id) const {
  auto it = leases_.find(run_id);
  return it != leases_.end() && it->second.agent_id == agent_id && it->second.attempt == attempt &&
         it->second.lease_id == lease_id;
}

void Controller::Changed() {
  ++version_;
  changed_cv_.SignalAll();
}

void Controller::Flush(Outbox& out) {
  for (auto& [link, msg] : out) {
    if (link) link->Send(msg);
  }
  out.clear();
}

Controller::DebugSizes Controller::Sizes() {
  absl::MutexLock lock(&mu_);
  DebugSizes d;
  d.agents = agents_.size();
  d.leases = leases_.size();
  d.stored_samples = stored_.size();
  d.cells = cells_.size();
  d.canceled = canceled_.size();
  d.fenced_losses = fenced_losses_.size();
  d.unsynced_experiments = unsynced_experiments_.size();
  d.unqueued_experiments = unqueued_experiments_.size();
  d.queued_runs = queue_.size();
  return d;
}

}  // namespace blkbench
