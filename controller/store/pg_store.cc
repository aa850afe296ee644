// PgStore: connecting and migrating, and the experiment queries (AddRuns included).
// Runs, samples and results are in pg_store_runs.cc; reports, progress and agents in
// pg_store_reports.cc; Import in pg_store_import.cc.
#include "controller/store/pg_store.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/run_order.h"
#include "controller/store/pg_rows.h"
#include "controller/store/pg_schema.h"
#include "controller/store/sqlite_rows.h"
#include "workloads/format.h"

namespace blkbench {

using pg::Bytea;
using pg::Result;
using pg::Transaction;

absl::StatusOr<std::unique_ptr<PgStore>> PgStore::Open(const std::string& conninfo) {
  absl::StatusOr<std::unique_ptr<pg::Conn>> conn = pg::Conn::Connect(conninfo);
  if (!conn.ok()) return conn.status();
  // Durable commits are the store's promise (docs/reliability.md, promise 1): refuse a server or
  // role configured to acknowledge before the WAL is flushed.
  absl::StatusOr<Result> sync =
      (*conn)->Query("read synchronous_commit", "SELECT current_setting('synchronous_commit')");
  if (!sync.ok()) return sync.status();
  if (const std::string mode = sync->Text(0, 0); mode == "off") {
    return absl::FailedPreconditionError(
        absl::StrCat("PostgreSQL at ", (*conn)->target(), " has synchronous_commit=", mode,
                     ": an acknowledged sample could be lost in a crash; set it to on"));
  }
  if (absl::Status s = pg::ApplyMigrations(**conn, pg::StoreMigrations()); !s.ok()) return s;
  return std::unique_ptr<PgStore>(new PgStore(*std::move(conn)));
}

absl::StatusOr<uint64_t> PgStore::CreateExperiment(const v1::Experiment& experiment) {
  if (absl::Status s = CheckNewExperiment(experiment); !s.ok()) return s;
  std::vector<std::string> specs;
  for (int i = 0; i < experiment.cells_size(); ++i) {
    v1::CellSpec cell = experiment.cells(i);
    cell.set_index(static_cast<uint32_t>(i));
    absl::StatusOr<std::string> spec = sqlite::Serialize(cell, "cell spec");
    if (!spec.ok()) return spec.status();
    specs.push_back(*std::move(spec));
  }

  absl::MutexLock lock(&mu_);
  absl::StatusOr<Transaction> txn = Transaction::Begin(*conn_, Transaction::Mode::kWrite);
  if (!txn.ok()) return txn.status();
  absl::StatusOr<Result> inserted = conn_->Query(
      "insert experiment",
      "INSERT INTO experiments (name, state, file_name, matrix_text, repeats, created_unix_ms,"
      " submitted_by) VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id",
      experiment.name(), sqlite::ExperimentStateName(v1::EXPERIMENT_QUEUED), experiment.file_name(),
      experiment.matrix_text(), experiment.repeats(), experiment.created_unix_ms(),
      experiment.submitted_by());
  if (!inserted.ok()) return inserted.status();
  const int64_t id = inserted->Int(0, 0);
  for (int i = 0; i < experiment.cells_size(); ++i) {
    if (absl::StatusOr<Result> r = conn_->Query(
            "insert cell",
            "INSERT INTO cells (experiment_id, cell_index, label, spec) VALUES ($1, $2, $3, $4)",
            id, i, workloads::CellLabel(experiment.cells(i)), Bytea{specs[static_cast<size_t>(i)]});
        !r.ok()) {
      return r.status();
    }
  }
  // Ids in RunOrder (repeat-major), as SqliteStore numbers them.
  const std::string queued = sqlite::RunStateName(v1::RUN_QUEUED);
  for (const RunSlot& run :
       RunOrder(static_cast<uint32_t>(experiment.cells_size()), experiment.repeats())) {
    if (absl::StatusOr<Result> r = conn_->Query(
            "insert run",
            "INSERT INTO runs (experiment_id, cell_index, repeat, attempt, state, created_unix_ms)"
            " VALUES ($1, $2, $3, 0, $4, $5)",
            id, run.cell_index, run.repeat, queued, experiment.created_unix_ms());
        !r.ok()) {
      return r.status();
    }
  }
  if (absl::Status s = txn->Commit(); !s.ok()) return s;
  return static_cast<uint64_t>(id);
}

absl::StatusOr<std::vector<uint64_t>> PgStore::AddRuns(uint64_t experiment_id,
                                                       const std::vector<uint32_t>& cell_indices,
                                                       uint32_t count, int64_t created_unix_ms) {
  if (absl::Status s = CheckAddRuns(cell_indices, count); !s.ok()) return s;
  absl::MutexLock lock(&mu_);
  absl::StatusOr<Transaction> txn = Transaction::Begin(*conn_, Transaction::Mode::kWrite);
  if (!txn.ok()) return txn.status();
  const auto key = static_cast<int64_t>(experiment_id);
  // FOR UPDATE: a concurrent AddRuns on the same experiment waits for this one.
  absl::StatusOr<Result> exp = conn_->Query(
      "get experiment state", "SELECT state FROM experiments WHERE id = $1 FOR UPDATE", key);
  if (!exp.ok()) return exp.status();
  if (exp->rows() == 0) {
    return absl::NotFoundError(absl::StrCat("experiment ", experiment_id, " not found"));
  }
  const std::string state = exp->Text(0, 0);
  if (state == sqlite::ExperimentStateName(v1::EXPERIMENT_CANCELED)) {
    return absl::FailedPreconditionError(
        absl::StrCat("experiment ", experiment_id, " was canceled; it takes no more runs"));
  }
  // Next repeat number per cell; a cell without a row is not a cell of the experiment.
  std::vector<int64_t> next;
  for (uint32_t cell : cell_indices) {
    absl::StatusOr<Result> r = conn_->Query(
        "get highest repeat",
        "SELECT COUNT(*), COALESCE(MAX(r.repeat), -1) FROM cells c LEFT JOIN runs r ON "
        "r.experiment_id = c.experiment_id AND r.cell_index = c.cell_index "
        "WHERE c.experiment_id = $1 AND c.cell_index = $2",
        key, cell);
    if (!r.ok()) return r.status();
    if (r->rows() == 0 || r->Int(0, 0) == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("experiment ", experiment_id, " has no cell ", cell));
    }
    next.push_back(r->Int(0, 1) + 1);
  }
  std::vector<uint64_t> ids;
  const std::string queued = sqlite::RunStateName(v1::RUN_QUEUED);
  for (const RunSlot& run : RunOrder(static_cast<uint32_t>(cell_indices.size()), count)) {
    absl::StatusOr<Result> r = conn_->Query(
        "insert run",
        "INSERT INTO runs (experiment_id, cell_index, repeat, attempt, state, created_unix_ms)"
        " VALUES ($1, $2, $3, 0, $4, $5) RETURNING id",
        key, cell_indices[run.cell_index], next[run.cell_index] + run.repeat, queued,
        created_unix_ms);
    if (!r.ok()) return r.status();
    ids.push_back(r->U64(0, 0));
  }
  if (state == sqlite::ExperimentStateName(v1::EXPERIMENT_DONE) ||
      state == sqlite::ExperimentStateName(v1::EXPERIMENT_FAILED)) {
    if (absl::StatusOr<Result> r = conn_->Query(
            "reopen experiment",
            "UPDATE experiments SET state = $1, error = '', finished_unix_ms = 0 WHERE id = $2",
            sqlite::ExperimentStateName(v1::EXPERIMENT_RUNNING), key);
        !r.ok()) {
      return r.status();
    }
  }
  if (absl::Status s = txn->Commit(); !s.ok()) return s;
  return ids;
}

absl::StatusOr<v1::Experiment> PgStore::GetExperiment(uint64_t id, bool with_results) {
  absl::MutexLock lock(&mu_);
  absl::StatusOr<Transaction> txn = Transaction::Begin(*conn_, Transaction::Mode::kRead);
  if (!txn.ok()) return txn.status();
  const auto key = static_cast<int64_t>(id);

  absl::StatusOr<Result> exp =
      conn_->Query("get experiment",
                   absl::StrCat("SELECT ", sqlite::kExperimentColumns,
                                ", e.matrix_text FROM experiments e WHERE e.id = $1"),
                   key);
  if (!exp.ok()) return exp.status();
  if (exp->rows() == 0) return absl::NotFoundError(absl::StrCat("experiment ", id, " not found"));
  absl::StatusOr<v1::Experiment> experiment = pg::ExperimentFromRow(*exp, 0);
  if (!experiment.ok()) return experiment.status();
  experiment->set_matrix_text(exp->Text(0, sqlite::kExperimentColumnCount));

  absl::StatusOr<Result> cells = conn_->Query(
      "get cells",
      "SELECT cell_index, spec FROM cells WHERE experiment_id = $1 ORDER BY cell_index", key);
  if (!cells.ok()) return cells.status();
  for (int i = 0; i < cells->rows(); ++i) {
    if (absl::Status s = sqlite::ParseBlob(
            cells->Bytes(i, 1), absl::StrCat("cell ", cells->Int(i, 0), " of experiment ", id),
            *experiment->add_cells());
        !s.ok()) {
      return s;
    }
  }
  absl::StatusOr<Result> runs =
      conn_->Query("get runs",
                   absl::StrCat("SELECT ", sqlite::kRunColumns,
                                " FROM runs r WHERE r.experiment_id = $1 ORDER BY r.id"),
                   key);
  if (!runs.ok()) return runs.status();
  for (int i = 0; i < runs->rows(); ++i) {
    absl::StatusOr<v1::Run> run = pg::RunFromRow(*runs, i);
    if (!run.ok()) return run.status();
    *experiment->add_runs() = *std::move(run);
  }
  std::unordered_map<uint64_t, v1::Run*> by_id;
  for (v1::Run& run : *experiment->mutable_runs()) by_id[run.id()] = &run;
  if (absl::Status s = FillRunDetails(by_id, "r.experiment_id = $1", key, with_results); !s.ok()) {
    return s;
  }
  return experiment;
}

absl::StatusOr<std::vector<v1::Experiment>> PgStore::ListExperiments(uint32_t limit) {
  absl::MutexLock lock(&mu_);
  if (absl::Status s = conn_->EnsureConnected("list experiments"); !s.ok()) return s;
  // LIMIT NULL is no limit.
  absl::StatusOr<Result> r = conn_->Query(
      "list experiments",
      absl::StrCat("SELECT ", sqlite::kExperimentColumns,
                   " FROM experiments e ORDER BY e.id DESC LIMIT NULLIF($1::bigint, 0)"),
      limit);
  if (!r.ok()) return r.status();
  std::vector<v1::Experiment> out;
  for (int i = 0; i < r->rows(); ++i) {
    absl::StatusOr<v1::Experiment> e = pg::ExperimentFromRow(*r, i);
    if (!e.ok()) return e.status();
    out.push_back(*std::move(e));
  }
  return out;
}

absl::Status PgStore::UpdateExperimentState(uint64_t id, v1::ExperimentState state,
                                            const std::string& error, int64_t finished_unix_ms) {
  if (!v1::ExperimentState_IsValid(state)) {
    return absl::InvalidArgumentError(absl::StrCat("UpdateExperimentState: bad state ", state));
  }
  absl::MutexLock lock(&mu_);
  const char* op = "update experiment state";
  if (absl::Status s = conn_->EnsureConnected(op); !s.ok()) return s;
  absl::StatusOr<Result> r = conn_->Query(
      op, "UPDATE experiments SET state = $1, error = $2, finished_unix_ms = $3 WHERE id = $4",
      sqlite::ExperimentStateName(state), error, finished_unix_ms, static_cast<int64_t>(id));
  if (!r.ok()) return r.status();
  if (r->affected() == 0) return absl::NotFoundError(absl::StrCat("experiment ", id, " not found"));
  return absl::OkStatus();
}

absl::Status PgStore::RecordCancel(uint64_t id, const std::string& who) {
  absl::MutexLock lock(&mu_);
  const char* op = "record cancel";
  if (absl::Status s = conn_->EnsureConnected(op); !s.ok()) return s;
  absl::StatusOr<Result> r =
      conn_->Query(op, "UPDATE experiments SET canceled_by = $1 WHERE id = $2",
                   who.empty() ? std::string("unknown") : who, static_cast<int64_t>(id));
  if (!r.ok()) return r.status();
  if (r->affected() == 0) return absl::NotFoundError(absl::StrCat("experiment ", id, " not found"));
  return absl::OkStatus();
}

}  // namespace blkbench
