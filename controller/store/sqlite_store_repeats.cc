// SqliteStore::AddRuns: more repeats of some cells of an existing experiment (the gate's
// --auto-repeat), in one transaction with reopening the experiment.

#include "absl/strings/str_cat.h"
#include "common/run_order.h"
#include "controller/store/sqlite_rows.h"
#include "controller/store/sqlite_store.h"

namespace blkbench {

using sqlite::Statement;
using sqlite::Transaction;

absl::StatusOr<std::vector<uint64_t>> SqliteStore::AddRuns(
    uint64_t experiment_id, const std::vector<uint32_t>& cell_indices, uint32_t count,
    int64_t created_unix_ms) {
  if (absl::Status s = CheckAddRuns(cell_indices, count); !s.ok()) return s;
  absl::MutexLock lock(&mu_);
  absl::StatusOr<Transaction> txn = Transaction::Begin(*db_, Transaction::Mode::kWrite);
  if (!txn.ok()) return txn.status();
  const auto key = static_cast<int64_t>(experiment_id);

  std::string state;
  {
    absl::StatusOr<Statement> select =
        db_->Prepare("get experiment state", "SELECT state FROM experiments WHERE id = ?");
    if (!select.ok()) return select.status();
    absl::StatusOr<bool> row = select->BindAll(key).Step();
    if (!row.ok()) return row.status();
    if (!*row) {
      return absl::NotFoundError(absl::StrCat("experiment ", experiment_id, " not found"));
    }
    state = select->Text(0);
  }
  if (state == sqlite::ExperimentStateName(v1::EXPERIMENT_CANCELED)) {
    return absl::FailedPreconditionError(
        absl::StrCat("experiment ", experiment_id, " was canceled; it takes no more runs"));
  }

  // Next repeat number per cell; a cell without runs is not a cell of the experiment.
  std::vector<int64_t> next;
  {
    absl::StatusOr<Statement> select = db_->Prepare(
        "get highest repeat",
        "SELECT COUNT(*), COALESCE(MAX(r.repeat), -1) FROM cells c LEFT JOIN runs r ON "
        "r.experiment_id = c.experiment_id AND r.cell_index = c.cell_index "
        "WHERE c.experiment_id = ? AND c.cell_index = ?");
    if (!select.ok()) return select.status();
    for (uint32_t cell : cell_indices) {
      select->BindAll(key, static_cast<int64_t>(cell));
      absl::StatusOr<bool> row = select->Step();
      if (!row.ok()) return row.status();
      if (!*row || select->Int(0) == 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("experiment ", experiment_id, " has no cell ", cell));
      }
      next.push_back(select->Int(1) + 1);
      if (absl::Status s = select->Reset(); !s.ok()) return s;
    }
  }

  std::vector<uint64_t> ids;
  {
    absl::StatusOr<Statement> insert =
        db_->Prepare("insert run",
                     "INSERT INTO runs (experiment_id, cell_index, repeat, attempt, state, "
                     "created_unix_ms) VALUES (?, ?, ?, 0, ?, ?)");
    if (!insert.ok()) return insert.status();
    const std::string queued = sqlite::RunStateName(v1::RUN_QUEUED);
    // The same RunOrder as CreateExperiment, over the chosen cells and the new repeats.
    for (const RunSlot& run : RunOrder(static_cast<uint32_t>(cell_indices.size()), count)) {
      insert->BindAll(key, static_cast<int64_t>(cell_indices[run.cell_index]),
                      next[run.cell_index] + run.repeat, queued, created_unix_ms);
      if (absl::Status s = insert->Run(); !s.ok()) return s;
      if (absl::Status s = insert->Reset(); !s.ok()) return s;
      ids.push_back(static_cast<uint64_t>(db_->LastInsertRowid()));
    }
  }
  if (state == sqlite::ExperimentStateName(v1::EXPERIMENT_DONE) ||
      state == sqlite::ExperimentStateName(v1::EXPERIMENT_FAILED)) {
    if (absl::Status s = db_->Execute(
            "reopen experiment",
            "UPDATE experiments SET state = ?, error = '', finished_unix_ms = 0 WHERE id = ?",
            sqlite::ExperimentStateName(v1::EXPERIMENT_RUNNING), key);
        !s.ok()) {
      return s;
    }
  }
  if (absl::Status s = txn->Commit(); !s.ok()) return s;
  return ids;
}

}  // namespace blkbench
