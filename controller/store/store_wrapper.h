// Decorators of a Store, after leveldb's EnvWrapper / ErrorEnv: StoreWrapper forwards
// every call (InstrumentedStore times them); FaultyStore fails the writes that a full or
// broken disk fails (samples, results, run and agent updates, a batch of reports as a
// whole) while told to, so controller tests inject the real fault a transient store
// error is, through the same group commit production uses.
#ifndef BLKBENCH_CONTROLLER_STORE_STORE_WRAPPER_H_
#define BLKBENCH_CONTROLLER_STORE_STORE_WRAPPER_H_

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "controller/store/store.h"

namespace blkbench {

// Forwards everything to `target`, which must outlive it (or which it owns, given as a
// unique_ptr), the one-transaction methods (CommitReports, UpdateRuns,
// GetExperimentProgress) whole, so a wrapped store keeps its group commit. Every call is
// timed and handed to Observe with its operation name (Operations()); a subclass
// overrides the writes it wants to fail or Observe to measure. Thread-safe if `target` is.
class StoreWrapper : public Store {
 public:
  explicit StoreWrapper(Store& target) : target_(target) {}
  explicit StoreWrapper(std::unique_ptr<Store> owned)
      : owned_(std::move(owned)), target_(*owned_) {}

  // The operation name of every method, in declaration order, for pre-creating series.
  static std::vector<std::string> Operations() {
    return {"create_experiment", "add_runs",          "get_experiment",
            "list_experiments",  "update_experiment", "record_cancel",
            "get_run",           "list_runs",         "update_run",
            "update_runs",       "append_sample",     "list_samples",
            "finish_run",        "commit_reports",    "experiment_progress",
            "upsert_agent",      "list_agents"};
  }

  absl::StatusOr<uint64_t> CreateExperiment(const v1::Experiment& experiment) override {
    return Forward("create_experiment", [&] { return target_.CreateExperiment(experiment); });
  }
  absl::StatusOr<std::vector<uint64_t>> AddRuns(uint64_t experiment_id,
                                                const std::vector<uint32_t>& cell_indices,
                                                uint32_t count, int64_t created_unix_ms) override {
    return Forward("add_runs", [&] {
      return target_.AddRuns(experiment_id, cell_indices, count, created_unix_ms);
    });
  }
  absl::StatusOr<v1::Experiment> GetExperiment(uint64_t id, bool with_results) override {
    return Forward("get_experiment", [&] { return target_.GetExperiment(id, with_results); });
  }
  absl::StatusOr<std::vector<v1::Experiment>> ListExperiments(uint32_t limit) override {
    return Forward("list_experiments", [&] { return target_.ListExperiments(limit); });
  }
  absl::Status UpdateExperimentState(uint64_t id, v1::ExperimentState state,
                                     const std::string& error, int64_t finished_unix_ms) override {
    return Forward("update_experiment", [&] {
      return target_.UpdateExperimentState(id, state, error, finished_unix_ms);
    });
  }
  absl::Status RecordCancel(uint64_t id, const std::string& who) override {
    return Forward("record_cancel", [&] { return target_.RecordCancel(id, who); });
  }
  absl::StatusOr<v1::Run> GetRun(uint64_t run_id) override {
    return Forward("get_run", [&] { return target_.GetRun(run_id); });
  }
  absl::StatusOr<std::vector<v1::Run>> ListRunsInStates(
      const std::vector<v1::RunState>& states) override {
    return Forward("list_runs", [&] { return target_.ListRunsInStates(states); });
  }
  absl::Status UpdateRun(const v1::Run& run) override {
    return Forward("update_run", [&] { return target_.UpdateRun(run); });
  }
  RunsWritten UpdateRuns(const std::vector<v1::Run>& runs) override {
    return Forward("update_runs", [&] { return target_.UpdateRuns(runs); });
  }
  absl::Status AppendSample(uint64_t run_id, uint32_t attempt, const v1::Sample& sample) override {
    return Forward("append_sample", [&] { return target_.AppendSample(run_id, attempt, sample); });
  }
  absl::StatusOr<std::vector<v1::Sample>> ListSamples(uint64_t run_id) override {
    return Forward("list_samples", [&] { return target_.ListSamples(run_id); });
  }
  absl::Status FinishRun(uint64_t run_id, uint32_t attempt, v1::RunState state,
                         const std::string& error, int64_t finished_unix_ms,
                         const v1::RunResult* result) override {
    return Forward("finish_run", [&] {
      return target_.FinishRun(run_id, attempt, state, error, finished_unix_ms, result);
    });
  }
  absl::StatusOr<std::vector<absl::Status>> CommitReports(
      const std::vector<AgentReport>& reports) override {
    return Forward("commit_reports", [&] { return target_.CommitReports(reports); });
  }
  absl::StatusOr<ExperimentProgress> GetExperimentProgress(uint64_t id) override {
    return Forward("experiment_progress", [&] { return target_.GetExperimentProgress(id); });
  }
  absl::Status UpsertAgent(const v1::AgentInfo& agent) override {
    return Forward("upsert_agent", [&] { return target_.UpsertAgent(agent); });
  }
  absl::StatusOr<std::vector<v1::AgentInfo>> ListAgents() override {
    return Forward("list_agents", [&] { return target_.ListAgents(); });
  }

 protected:
  // After every forwarded call: its operation name, how long it took (a steady clock:
  // real latency) and whether it succeeded. Not called for a call a subclass refused.
  virtual void Observe(const char* /*operation*/, double /*seconds*/, bool /*ok*/) {}

 private:
  static bool Ok(const absl::Status& s) { return s.ok(); }
  template <typename T>
  static bool Ok(const absl::StatusOr<T>& s) {
    return s.ok();
  }
  static bool Ok(const RunsWritten& w) { return w.status.ok(); }

  template <typename Call>
  auto Forward(const char* operation, Call call) -> decltype(call()) {
    const auto start = std::chrono::steady_clock::now();
    auto result = call();
    Observe(operation,
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(),
            Ok(result));
    return result;
  }

  std::unique_ptr<Store> owned_;  // null when borrowed
  Store& target_;
};

// While failing(), every write — samples, results, runs, experiments, agents — returns
// ResourceExhausted ("disk full", as SQLite's SQLITE_FULL maps) and changes nothing;
// reads go through, as on a full disk. FailWritesAfter(n) lets n more writes through
// and then fails from the (n+1)th on (for "the Nth call fails"). Scope::kAgentReports
// narrows the fault to what agents send (AppendSample, FinishRun), for tests that need
// the rest of the controller working while samples are refused. Thread-safe;
// failures() counts the calls refused, so a test can wait for them.
class FaultyStore final : public StoreWrapper {
 public:
  using StoreWrapper::StoreWrapper;

  enum class Scope { kAllWrites, kAgentReports };
  void SetFailing(bool failing, Scope scope = Scope::kAllWrites) {
    pass_ = -1;
    agent_reports_only_ = scope == Scope::kAgentReports;
    failing_ = failing;
  }
  void FailWritesAfter(int n) {
    pass_ = n;
    failing_ = true;
  }
  bool failing() const { return failing_; }
  int failures() const { return failures_; }

  absl::StatusOr<uint64_t> CreateExperiment(const v1::Experiment& experiment) override {
    if (FailOther()) return Full();
    return StoreWrapper::CreateExperiment(experiment);
  }
  absl::StatusOr<std::vector<uint64_t>> AddRuns(uint64_t experiment_id,
                                                const std::vector<uint32_t>& cell_indices,
                                                uint32_t count, int64_t created_unix_ms) override {
    if (FailOther()) return Full();
    return StoreWrapper::AddRuns(experiment_id, cell_indices, count, created_unix_ms);
  }
  absl::Status UpdateExperimentState(uint64_t id, v1::ExperimentState state,
                                     const std::string& error, int64_t finished_unix_ms) override {
    if (FailOther()) return Full();
    return StoreWrapper::UpdateExperimentState(id, state, error, finished_unix_ms);
  }
  absl::Status RecordCancel(uint64_t id, const std::string& who) override {
    if (FailOther()) return Full();
    return StoreWrapper::RecordCancel(id, who);
  }
  absl::Status UpdateRun(const v1::Run& run) override {
    if (FailOther()) return Full();
    return StoreWrapper::UpdateRun(run);
  }
  absl::Status AppendSample(uint64_t run_id, uint32_t attempt, const v1::Sample& sample) override {
    if (Fail()) return Full();
    return StoreWrapper::AppendSample(run_id, attempt, sample);
  }
  absl::Status FinishRun(uint64_t run_id, uint32_t attempt, v1::RunState state,
                         const std::string& error, int64_t finished_unix_ms,
                         const v1::RunResult* result) override {
    if (Fail()) return Full();
    return StoreWrapper::FinishRun(run_id, attempt, state, error, finished_unix_ms, result);
  }
  absl::Status UpsertAgent(const v1::AgentInfo& agent) override {
    if (FailOther()) return Full();
    return StoreWrapper::UpsertAgent(agent);
  }
  // A batch is one transaction: a full disk fails its COMMIT, and nothing of it is stored.
  absl::StatusOr<std::vector<absl::Status>> CommitReports(
      const std::vector<AgentReport>& reports) override {
    if (Fail()) return Full();
    return StoreWrapper::CommitReports(reports);
  }
  RunsWritten UpdateRuns(const std::vector<v1::Run>& runs) override {
    if (FailOther()) return RunsWritten{0, Full()};
    return StoreWrapper::UpdateRuns(runs);
  }

 private:
  bool FailOther() { return !agent_reports_only_ && Fail(); }
  bool Fail() {
    if (!failing_) return false;
    if (pass_ > 0) {
      --pass_;
      return false;
    }
    return true;
  }
  absl::Status Full() {
    ++failures_;
    return absl::ResourceExhaustedError("database or disk is full");
  }
  std::atomic<bool> failing_{false};
  std::atomic<int> pass_{-1};
  std::atomic<bool> agent_reports_only_{false};
  std::atomic<int> failures_{0};
};

}  // namespace blkbench

#endif  // BLKBENCH_CONTROLLER_STORE_STORE_WRAPPER_H_
