// SqlStore: the Store written once in SQL over the dialect seam (sql_conn.h). SqliteStore
// (one local file) and PgStore (a PostgreSQL server) are SqlStore on their connection.
#ifndef BLKBENCH_CONTROLLER_STORE_SQL_STORE_H_
#define BLKBENCH_CONTROLLER_STORE_SQL_STORE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "controller/store/sql_conn.h"
#include "controller/store/store.h"
#include "controller/store/store_copy.h"

namespace blkbench {

// Thread-safe: one connection serialized by a mutex (the controller's writes are already
// serialized by group commit, so a pool would buy little). Every method is one
// transaction, rolled back on error; errors are the connection's (sql_conn.h): a full
// disk is ResourceExhausted, a busy database or a lost server Unavailable (and the next
// call re-connects).
class SqlStore : public Store {
 public:
  absl::StatusOr<uint64_t> CreateExperiment(const v1::Experiment& experiment) override;
  absl::StatusOr<std::vector<uint64_t>> AddRuns(uint64_t experiment_id,
                                                const std::vector<uint32_t>& cell_indices,
                                                uint32_t count, int64_t created_unix_ms) override;
  absl::StatusOr<v1::Experiment> GetExperiment(uint64_t id, bool with_results) override;
  absl::StatusOr<std::vector<v1::Experiment>> ListExperiments(uint32_t limit) override;
  absl::Status UpdateExperimentState(uint64_t id, v1::ExperimentState state,
                                     const std::string& error, int64_t finished_unix_ms) override;
  absl::Status RecordCancel(uint64_t id, const std::string& who) override;
  absl::StatusOr<v1::Run> GetRun(uint64_t run_id) override;
  absl::StatusOr<std::vector<v1::Run>> ListRunsInStates(
      const std::vector<v1::RunState>& states) override;
  absl::Status UpdateRun(const v1::Run& run) override;
  RunsWritten UpdateRuns(const std::vector<v1::Run>& runs) override;  // one transaction
  absl::Status AppendSample(uint64_t run_id, uint32_t attempt, const v1::Sample& sample) override;
  absl::StatusOr<std::vector<v1::Sample>> ListSamples(uint64_t run_id) override;
  absl::Status FinishRun(uint64_t run_id, uint32_t attempt, v1::RunState state,
                         const std::string& error, int64_t finished_unix_ms,
                         const v1::RunResult* result) override;
  // One BEGIN … COMMIT for the whole batch (one fsync / WAL flush); each report in its
  // own SAVEPOINT so a report refused for its content rolls back alone.
  absl::StatusOr<std::vector<absl::Status>> CommitReports(
      const std::vector<AgentReport>& reports) override;
  absl::StatusOr<ExperimentProgress> GetExperimentProgress(uint64_t id) override;
  absl::Status UpsertAgent(const v1::AgentInfo& agent) override;
  absl::StatusOr<std::vector<v1::AgentInfo>> ListAgents() override;

  // Copies `contents` (experiments with their ids, runs with attempt, lease and state,
  // samples, results, agents) in one transaction; new ids continue after the copied
  // ones. FailedPrecondition, changing nothing, unless the store is empty (no experiment
  // and no agent). `blkbench-controller migrate`'s write side.
  absl::Status Import(const StoreContents& contents);

 protected:
  explicit SqlStore(std::unique_ptr<sql::Conn> conn) : conn_(std::move(conn)) {}

 private:
  // Unlocked helpers; each runs inside the caller's transaction.
  absl::StatusOr<v1::Run> ReadRun(uint64_t run_id) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Fills last_sample and samples (count) of each run's current attempt and, if
  // with_results, its result. `runs` (by id) are the runs matching `where`, an SQL
  // condition on runs aliased r with one parameter ?1 bound to `key`.
  absl::Status FillRunDetails(const std::unordered_map<uint64_t, v1::Run*>& runs,
                              absl::string_view where, int64_t key, bool with_results)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status WriteRun(const v1::Run& run) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // AppendSample's writes: starts an ASSIGNED run of that attempt, then InsertSample.
  absl::Status WriteSample(uint64_t run_id, uint32_t attempt, const v1::Sample& sample)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The sample and its histogram; nothing for a duplicate (run, attempt, seq).
  absl::Status InsertSample(uint64_t run_id, uint32_t attempt, const v1::Sample& sample)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // FinishRun's writes (`run` read in the same transaction).
  absl::Status WriteFinish(const v1::Run& run, uint32_t attempt, v1::RunState state,
                           const std::string& error, int64_t finished_unix_ms,
                           const v1::RunResult* result) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // One report of CommitReports, inside its savepoint; `run` is the batch's copy of the
  // report's run (null: no such run), updated as the report changes it.
  absl::Status WriteReport(const AgentReport& report, v1::Run* run)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The runs of a batch's reports, by id, read in chunks of a fixed size.
  absl::StatusOr<std::unordered_map<uint64_t, v1::Run>> ReadRuns(
      const std::vector<AgentReport>& reports) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status WriteResult(uint64_t run_id, uint32_t attempt, const v1::RunResult& result)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status WriteHistogram(const char* owner_kind, int64_t owner_id, const char* name,
                              const v1::Histogram& histogram) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status WriteAgent(const v1::AgentInfo& agent) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // A write method's body in one write transaction, committed if `body` succeeds.
  template <typename Body>
  absl::Status InWriteTransaction(Body body) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    absl::StatusOr<sql::Transaction> txn = sql::Transaction::Begin(*conn_, sql::Conn::Mode::kWrite);
    if (!txn.ok()) return txn.status();
    if (absl::Status s = body(); !s.ok()) return s;
    return txn->Commit();
  }

  absl::Mutex mu_;
  std::unique_ptr<sql::Conn> conn_ ABSL_GUARDED_BY(mu_);
};

}  // namespace blkbench

#endif  // BLKBENCH_CONTROLLER_STORE_SQL_STORE_H_
