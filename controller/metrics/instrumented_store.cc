// InstrumentedStore: one timed delegation per Store method; see instrumented_store.h.
#include "controller/metrics/instrumented_store.h"

namespace blkbench {

std::vector<std::string> InstrumentedStore::Operations() {
  return {"create_experiment", "add_runs",          "get_experiment",
          "list_experiments",  "update_experiment", "record_cancel",
          "get_run",           "list_runs",         "update_run",
          "update_runs",       "append_sample",     "list_samples",
          "finish_run",        "commit_reports",    "experiment_progress",
          "upsert_agent",      "list_agents"};
}

absl::StatusOr<uint64_t> InstrumentedStore::CreateExperiment(const v1::Experiment& experiment) {
  return Timed("create_experiment", [&] { return inner_->CreateExperiment(experiment); });
}

absl::StatusOr<std::vector<uint64_t>> InstrumentedStore::AddRuns(
    uint64_t experiment_id, const std::vector<uint32_t>& cell_indices, uint32_t count,
    int64_t created_unix_ms) {
  return Timed("add_runs", [&] {
    return inner_->AddRuns(experiment_id, cell_indices, count, created_unix_ms);
  });
}

absl::StatusOr<v1::Experiment> InstrumentedStore::GetExperiment(uint64_t id, bool with_results) {
  return Timed("get_experiment", [&] { return inner_->GetExperiment(id, with_results); });
}

absl::StatusOr<std::vector<v1::Experiment>> InstrumentedStore::ListExperiments(uint32_t limit) {
  return Timed("list_experiments", [&] { return inner_->ListExperiments(limit); });
}

absl::Status InstrumentedStore::UpdateExperimentState(uint64_t id, v1::ExperimentState state,
                                                      const std::string& error,
                                                      int64_t finished_unix_ms) {
  return Timed("update_experiment",
               [&] { return inner_->UpdateExperimentState(id, state, error, finished_unix_ms); });
}

absl::Status InstrumentedStore::RecordCancel(uint64_t id, const std::string& who) {
  return Timed("record_cancel", [&] { return inner_->RecordCancel(id, who); });
}

absl::StatusOr<v1::Run> InstrumentedStore::GetRun(uint64_t run_id) {
  return Timed("get_run", [&] { return inner_->GetRun(run_id); });
}

absl::StatusOr<std::vector<v1::Run>> InstrumentedStore::ListRunsInStates(
    const std::vector<v1::RunState>& states) {
  return Timed("list_runs", [&] { return inner_->ListRunsInStates(states); });
}

absl::Status InstrumentedStore::UpdateRun(const v1::Run& run) {
  return Timed("update_run", [&] { return inner_->UpdateRun(run); });
}

absl::Status InstrumentedStore::AppendSample(uint64_t run_id, uint32_t attempt,
                                             const v1::Sample& sample) {
  return Timed("append_sample", [&] { return inner_->AppendSample(run_id, attempt, sample); });
}

absl::StatusOr<std::vector<v1::Sample>> InstrumentedStore::ListSamples(uint64_t run_id) {
  return Timed("list_samples", [&] { return inner_->ListSamples(run_id); });
}

absl::Status InstrumentedStore::FinishRun(uint64_t run_id, uint32_t attempt, v1::RunState state,
                                          const std::string& error, int64_t finished_unix_ms,
                                          const v1::RunResult* result) {
  return Timed("finish_run", [&] {
    return inner_->FinishRun(run_id, attempt, state, error, finished_unix_ms, result);
  });
}

absl::Status InstrumentedStore::UpsertAgent(const v1::AgentInfo& agent) {
  return Timed("upsert_agent", [&] { return inner_->UpsertAgent(agent); });
}

absl::StatusOr<std::vector<v1::AgentInfo>> InstrumentedStore::ListAgents() {
  return Timed("list_agents", [&] { return inner_->ListAgents(); });
}

absl::StatusOr<std::vector<absl::Status>> InstrumentedStore::CommitReports(
    const std::vector<AgentReport>& reports) {
  return Timed("commit_reports", [&] { return inner_->CommitReports(reports); });
}

RunsWritten InstrumentedStore::UpdateRuns(const std::vector<v1::Run>& runs) {
  const auto start = std::chrono::steady_clock::now();
  RunsWritten written = inner_->UpdateRuns(runs);
  metrics_.ObserveStore(
      "update_runs",
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(),
      written.status.ok());
  return written;
}

absl::StatusOr<ExperimentProgress> InstrumentedStore::GetExperimentProgress(uint64_t id) {
  return Timed("experiment_progress", [&] { return inner_->GetExperimentProgress(id); });
}

}  // namespace blkbench
