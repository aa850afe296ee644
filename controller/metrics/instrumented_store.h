// InstrumentedStore: a Store decorator that times every call into ServiceMetrics
// (blkbench_store_operation_duration_seconds, blkbench_store_errors_total) and
// otherwise delegates; the controller's store is wrapped in it when metrics are on.
#ifndef BLKBENCH_CONTROLLER_METRICS_INSTRUMENTED_STORE_H_
#define BLKBENCH_CONTROLLER_METRICS_INSTRUMENTED_STORE_H_

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "controller/metrics/service_metrics.h"
#include "controller/store/store.h"

namespace blkbench {

// Thread-safe as the wrapped store is. `metrics` must outlive this object.
class InstrumentedStore final : public Store {
 public:
  InstrumentedStore(std::unique_ptr<Store> inner, ServiceMetrics& metrics)
      : inner_(std::move(inner)), metrics_(metrics) {}

  // The operation label of every method, for pre-creating series.
  static std::vector<std::string> Operations();

  absl::StatusOr<uint64_t> CreateExperiment(const v1::Experiment& experiment) override;
  absl::StatusOr<std::vector<uint64_t>> AddRuns(uint64_t experiment_id,
                                                const std::vector<uint32_t>& cell_indices,
                                                uint32_t count, int64_t created_unix_ms) override;
  absl::StatusOr<v1::Experiment> GetExperiment(uint64_t id, bool with_results) override;
  absl::StatusOr<std::vector<v1::Experiment>> ListExperiments(uint32_t limit) override;
  absl::Status RecordCancel(uint64_t id, const std::string& who) override;
  absl::Status UpdateExperimentState(uint64_t id, v1::ExperimentState state,
                                     const std::string& error, int64_t finished_unix_ms) override;
  absl::StatusOr<v1::Run> GetRun(uint64_t run_id) override;
  absl::StatusOr<std::vector<v1::Run>> ListRunsInStates(
      const std::vector<v1::RunState>& states) override;
  absl::Status UpdateRun(const v1::Run& run) override;
  absl::Status AppendSample(uint64_t run_id, uint32_t attempt, const v1::Sample& sample) override;
  absl::StatusOr<std::vector<v1::Sample>> ListSamples(uint64_t run_id) override;
  absl::Status FinishRun(uint64_t run_id, uint32_t attempt, v1::RunState state,
                         const std::string& error, int64_t finished_unix_ms,
                         const v1::RunResult* result) override;
  absl::Status UpsertAgent(const v1::AgentInfo& agent) override;
  absl::StatusOr<std::vector<v1::AgentInfo>> ListAgents() override;
  // Forwarded whole, so the inner store's one-transaction versions (group commit, a
  // placement pass, one counting query) stay one transaction behind the decorator.
  absl::StatusOr<std::vector<absl::Status>> CommitReports(
      const std::vector<AgentReport>& reports) override;
  RunsWritten UpdateRuns(const std::vector<v1::Run>& runs) override;
  absl::StatusOr<ExperimentProgress> GetExperimentProgress(uint64_t id) override;

 private:
  // Runs `call`, observes its duration (a steady clock: real latency, not a timer) and
  // whether it failed under `operation`, and returns its result.
  template <typename Call>
  auto Timed(const char* operation, Call call) {
    const auto start = std::chrono::steady_clock::now();
    auto result = call();
    metrics_.ObserveStore(
        operation, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(),
        result.ok());
    return result;
  }

  std::unique_ptr<Store> inner_;
  ServiceMetrics& metrics_;
};

}  // namespace blkbench

#endif  // BLKBENCH_CONTROLLER_METRICS_INSTRUMENTED_STORE_H_
