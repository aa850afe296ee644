// SqliteStore: the embedded default Store, one SQLite file in WAL mode with durable
// (synchronous=FULL) commits, so whatever a method has returned OK for survives a crash.
#ifndef BLKBENCH_CONTROLLER_STORE_SQLITE_STORE_H_
#define BLKBENCH_CONTROLLER_STORE_SQLITE_STORE_H_

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
#include "controller/store/sqlite_db.h"
#include "controller/store/store.h"

namespace blkbench {

// Thread-safe: one connection serialized by a mutex. Several processes may open the same
// file (SQLite's locking plus busy_timeout); writers then take turns.
//
// Errors: every failing SQLite call becomes a status naming the operation and SQLite's
// message; a full disk (or max_db_bytes reached) is ResourceExhausted, a busy database
// past busy_timeout is Unavailable, and the method's transaction is rolled back.
class SqliteStore final : public Store {
 public:
  struct Options {
    // How long a statement waits for another process's lock before Unavailable.
    int busy_timeout_ms = 5000;
    // Upper bound on the database size (rounded down to whole pages); 0 = no bound.
    // Lets operators cap disk use, and tests simulate a full disk.
    int64_t max_db_bytes = 0;
    // Run PRAGMA quick_check at open (CheckIntegrity). It reads the whole file: seconds
    // per GB from the page cache, the disk's read speed cold (docs/reliability.md "Store
    // checks at open"); false skips it for very large stores (--skip_db_check).
    bool check_integrity = true;
  };

  // Opens or creates the store at `path` and migrates its schema to the newest version.
  // Before anything is written to an existing file: FailedPrecondition if it is not a
  // blkbench store (CheckOwnership) or was written by a newer schema, DataLoss if
  // quick_check finds it corrupt (CheckIntegrity); the error names the file, which is
  // left untouched.
  static absl::StatusOr<std::unique_ptr<SqliteStore>> Open(const std::string& path);
  static absl::StatusOr<std::unique_ptr<SqliteStore>> Open(const std::string& path,
                                                           const Options& options);

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
  // One BEGIN IMMEDIATE … COMMIT for the whole batch (one fsync); each report in its own
  // SAVEPOINT so a report refused for its content rolls back alone.
  absl::StatusOr<std::vector<absl::Status>> CommitReports(
      const std::vector<AgentReport>& reports) override;
  absl::StatusOr<ExperimentProgress> GetExperimentProgress(uint64_t id) override;
  absl::Status UpsertAgent(const v1::AgentInfo& agent) override;
  absl::StatusOr<std::vector<v1::AgentInfo>> ListAgents() override;

 private:
  explicit SqliteStore(std::unique_ptr<sqlite::Db> db) : db_(std::move(db)) {}

  // Unlocked helpers; each runs inside the caller's transaction.
  absl::StatusOr<v1::Run> ReadRun(uint64_t run_id) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Fills last_sample and samples (count) of each run's current attempt and, if
  // with_results, its result. `runs` (by id) are the runs matching `where`, an SQL
  // condition on runs aliased r with one parameter ?1 bound to `key`.
  absl::Status FillRunDetails(const std::unordered_map<uint64_t, v1::Run*>& runs,
                              absl::string_view where, int64_t key, bool with_results)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // UpdateRun's writes, inside the caller's transaction.
  absl::Status WriteRun(const v1::Run& run) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // AppendSample's and FinishRun's writes (`run` read in the same transaction).
  absl::Status WriteSample(uint64_t run_id, uint32_t attempt, const v1::Sample& sample)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status WriteFinish(const v1::Run& run, uint32_t attempt, v1::RunState state,
                           const std::string& error, int64_t finished_unix_ms,
                           const v1::RunResult* result) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // One report of CommitReports, inside its savepoint.
  absl::Status WriteReport(const AgentReport& report) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status WriteResult(uint64_t run_id, uint32_t attempt, const v1::RunResult& result)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status WriteHistogram(const char* owner_kind, int64_t owner_id, const char* name,
                              const v1::Histogram& histogram) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  absl::Mutex mu_;
  std::unique_ptr<sqlite::Db> db_ ABSL_GUARDED_BY(mu_);
};

}  // namespace blkbench

#endif  // BLKBENCH_CONTROLLER_STORE_SQLITE_STORE_H_
