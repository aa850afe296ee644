// SqlStore: the experiment queries (AddRuns included). Runs, samples and results are in
// sql_store_runs.cc; reports, progress and agents in sql_store_reports.cc; Import in
// sql_store_import.cc.
#include "controller/store/sql_store.h"

#include <cstdint>
#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/run_order.h"
#include "controller/store/sql_rows.h"
#include "workloads/format.h"

namespace blkbench {

using sql::Blob;
using sql::Result;

absl::StatusOr<uint64_t> SqlStore::CreateExperiment(const v1::Experiment& experiment) {
  if (absl::Status s = CheckNewExperiment(experiment); !s.ok()) return s;
  // Serialize before taking the lock: it is the only part that depends on input size.
  std::vector<std::string> specs;
  for (int i = 0; i < experiment.cells_size(); ++i) {
    v1::CellSpec cell = experiment.cells(i);
    cell.set_index(static_cast<uint32_t>(i));
    absl::StatusOr<std::string> spec = sql::Serialize(cell, "cell spec");
    if (!spec.ok()) return spec.status();
    specs.push_back(*std::move(spec));
  }

  absl::MutexLock lock(&mu_);
  int64_t id = 0;
  absl::Status status = InWriteTransaction([&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    absl::StatusOr<Result> inserted = conn_->Run(
        "insert experiment",
        "INSERT INTO experiments (name, state, file_name, matrix_text, repeats, created_unix_ms,"
        " submitted_by) VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id",
        experiment.name(), sql::ExperimentStateName(v1::EXPERIMENT_QUEUED), experiment.file_name(),
        experiment.matrix_text(), experiment.repeats(), experiment.created_unix_ms(),
        experiment.submitted_by());
    if (!inserted.ok()) return inserted.status();
    id = inserted->Int(0, 0);
    for (int i = 0; i < experiment.cells_size(); ++i) {
      if (absl::StatusOr<Result> r = conn_->Run(
              "insert cell",
              "INSERT INTO cells (experiment_id, cell_index, label, spec) VALUES (?, ?, ?, ?)", id,
              i, workloads::CellLabel(experiment.cells(i)), Blob{specs[static_cast<size_t>(i)]});
          !r.ok()) {
        return r.status();
      }
    }
    // Ids in RunOrder (repeat-major): placement in id order then spreads each cell's
    // repeats over the experiment, and `blkbench sim` runs them in the same order.
    const std::string queued = sql::RunStateName(v1::RUN_QUEUED);
    for (const RunSlot& run :
         RunOrder(static_cast<uint32_t>(experiment.cells_size()), experiment.repeats())) {
      if (absl::StatusOr<Result> r =
              conn_->Run("insert run",
                         "INSERT INTO runs (experiment_id, cell_index, repeat, attempt, state,"
                         " created_unix_ms) VALUES (?, ?, ?, 0, ?, ?)",
                         id, run.cell_index, run.repeat, queued, experiment.created_unix_ms());
          !r.ok()) {
        return r.status();
      }
    }
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  return static_cast<uint64_t>(id);
}

absl::StatusOr<std::vector<uint64_t>> SqlStore::AddRuns(uint64_t experiment_id,
                                                        const std::vector<uint32_t>& cell_indices,
                                                        uint32_t count, int64_t created_unix_ms) {
  if (absl::Status s = CheckAddRuns(cell_indices, count); !s.ok()) return s;
  absl::MutexLock lock(&mu_);
  std::vector<uint64_t> ids;
  absl::Status status = InWriteTransaction([&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    const auto key = static_cast<int64_t>(experiment_id);
    // Locked: a concurrent AddRuns on the same experiment waits for this one.
    absl::StatusOr<Result> exp = conn_->Run(
        "get experiment state",
        absl::StrCat("SELECT state FROM experiments WHERE id = ?", conn_->dialect().lock_rows),
        key);
    if (!exp.ok()) return exp.status();
    if (exp->rows() == 0) {
      return absl::NotFoundError(absl::StrCat("experiment ", experiment_id, " not found"));
    }
    const std::string state = exp->Text(0, 0);
    if (state == sql::ExperimentStateName(v1::EXPERIMENT_CANCELED)) {
      return absl::FailedPreconditionError(
          absl::StrCat("experiment ", experiment_id, " was canceled; it takes no more runs"));
    }
    // Next repeat number per cell; a cell without a row is not a cell of the experiment.
    std::vector<int64_t> next;
    for (uint32_t cell : cell_indices) {
      absl::StatusOr<Result> r =
          conn_->Run("get highest repeat",
                     "SELECT COUNT(*), COALESCE(MAX(r.repeat), -1) FROM cells c LEFT JOIN runs r ON"
                     " r.experiment_id = c.experiment_id AND r.cell_index = c.cell_index"
                     " WHERE c.experiment_id = ? AND c.cell_index = ?",
                     key, cell);
      if (!r.ok()) return r.status();
      if (r->rows() == 0 || r->Int(0, 0) == 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("experiment ", experiment_id, " has no cell ", cell));
      }
      next.push_back(r->Int(0, 1) + 1);
    }
    // The same RunOrder as CreateExperiment, over the chosen cells and the new repeats.
    const std::string queued = sql::RunStateName(v1::RUN_QUEUED);
    for (const RunSlot& run : RunOrder(static_cast<uint32_t>(cell_indices.size()), count)) {
      absl::StatusOr<Result> r = conn_->Run(
          "insert run",
          "INSERT INTO runs (experiment_id, cell_index, repeat, attempt, state, created_unix_ms)"
          " VALUES (?, ?, ?, 0, ?, ?) RETURNING id",
          key, cell_indices[run.cell_index], next[run.cell_index] + run.repeat, queued,
          created_unix_ms);
      if (!r.ok()) return r.status();
      ids.push_back(r->U64(0, 0));
    }
    if (state == sql::ExperimentStateName(v1::EXPERIMENT_DONE) ||
        state == sql::ExperimentStateName(v1::EXPERIMENT_FAILED)) {
      return conn_
          ->Run("reopen experiment",
                "UPDATE experiments SET state = ?, error = '', finished_unix_ms = 0 WHERE id = ?",
                sql::ExperimentStateName(v1::EXPERIMENT_RUNNING), key)
          .status();
    }
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  return ids;
}

absl::StatusOr<v1::Experiment> SqlStore::GetExperiment(uint64_t id, bool with_results) {
  absl::MutexLock lock(&mu_);
  absl::StatusOr<sql::Transaction> txn = sql::Transaction::Begin(*conn_, sql::Conn::Mode::kRead);
  if (!txn.ok()) return txn.status();
  const auto key = static_cast<int64_t>(id);

  absl::StatusOr<Result> exp =
      conn_->Run("get experiment",
                 absl::StrCat("SELECT ", sql::kExperimentColumns,
                              ", e.matrix_text FROM experiments e WHERE e.id = ?"),
                 key);
  if (!exp.ok()) return exp.status();
  if (exp->rows() == 0) return absl::NotFoundError(absl::StrCat("experiment ", id, " not found"));
  absl::StatusOr<v1::Experiment> experiment = sql::ExperimentFromRow(*exp, 0);
  if (!experiment.ok()) return experiment.status();
  experiment->set_matrix_text(exp->Text(0, sql::kExperimentColumnCount));

  absl::StatusOr<Result> cells = conn_->Run(
      "get cells", "SELECT cell_index, spec FROM cells WHERE experiment_id = ? ORDER BY cell_index",
      key);
  if (!cells.ok()) return cells.status();
  for (int i = 0; i < cells->rows(); ++i) {
    if (absl::Status s = sql::ParseBlob(
            cells->Bytes(i, 1), absl::StrCat("cell ", cells->Int(i, 0), " of experiment ", id),
            *experiment->add_cells());
        !s.ok()) {
      return s;
    }
  }
  absl::StatusOr<Result> runs =
      conn_->Run("get runs",
                 absl::StrCat("SELECT ", sql::kRunColumns,
                              " FROM runs r WHERE r.experiment_id = ? ORDER BY r.id"),
                 key);
  if (!runs.ok()) return runs.status();
  for (int i = 0; i < runs->rows(); ++i) {
    absl::StatusOr<v1::Run> run = sql::RunFromRow(*runs, i);
    if (!run.ok()) return run.status();
    *experiment->add_runs() = *std::move(run);
  }
  std::unordered_map<uint64_t, v1::Run*> by_id;
  for (v1::Run& run : *experiment->mutable_runs()) by_id[run.id()] = &run;
  if (absl::Status s = FillRunDetails(by_id, "r.experiment_id = ?1", key, with_results); !s.ok()) {
    return s;
  }
  return experiment;
}

absl::StatusOr<std::vector<v1::Experiment>> SqlStore::ListExperiments(uint32_t limit) {
  absl::MutexLock lock(&mu_);
  absl::StatusOr<Result> r =
      conn_->Run("list experiments",
                 absl::StrCat("SELECT ", sql::kExperimentColumns,
                              " FROM experiments e ORDER BY e.id DESC LIMIT ?"),
                 limit == 0 ? std::numeric_limits<int64_t>::max() : int64_t{limit});
  if (!r.ok()) return r.status();
  std::vector<v1::Experiment> out;
  for (int i = 0; i < r->rows(); ++i) {
    absl::StatusOr<v1::Experiment> e = sql::ExperimentFromRow(*r, i);
    if (!e.ok()) return e.status();
    out.push_back(*std::move(e));
  }
  return out;
}

absl::Status SqlStore::UpdateExperimentState(uint64_t id, v1::ExperimentState state,
                                             const std::string& error, int64_t finished_unix_ms) {
  if (!v1::ExperimentState_IsValid(state)) {
    return absl::InvalidArgumentError(absl::StrCat("UpdateExperimentState: bad state ", state));
  }
  absl::MutexLock lock(&mu_);
  absl::StatusOr<Result> r = conn_->Run(
      "update experiment state",
      "UPDATE experiments SET state = ?, error = ?, finished_unix_ms = ? WHERE id = ?",
      sql::ExperimentStateName(state), error, finished_unix_ms, static_cast<int64_t>(id));
  if (!r.ok()) return r.status();
  if (r->affected() == 0) return absl::NotFoundError(absl::StrCat("experiment ", id, " not found"));
  return absl::OkStatus();
}

absl::Status SqlStore::RecordCancel(uint64_t id, const std::string& who) {
  absl::MutexLock lock(&mu_);
  absl::StatusOr<Result> r =
      conn_->Run("record cancel", "UPDATE experiments SET canceled_by = ? WHERE id = ?",
                 who.empty() ? std::string("unknown") : who, static_cast<int64_t>(id));
  if (!r.ok()) return r.status();
  if (r->affected() == 0) return absl::NotFoundError(absl::StrCat("experiment ", id, " not found"));
  return absl::OkStatus();
}

}  // namespace blkbench
