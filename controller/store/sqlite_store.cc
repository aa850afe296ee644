// SqliteStore: opening and configuring the database, and the experiment queries.
// Run, sample and result queries are in sqlite_store_runs.cc, agents in sqlite_store_agents.cc.
#include "controller/store/sqlite_store.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/run_order.h"
#include "controller/store/schema.h"
#include "controller/store/sqlite_open_checks.h"
#include "controller/store/sqlite_rows.h"
#include "workloads/format.h"

namespace blkbench {

using sqlite::BlobArg;
using sqlite::Db;
using sqlite::Statement;
using sqlite::Transaction;

namespace {

// Pragmas are per connection, so every open sets them. Called once the file passed the
// checks: journal_mode=WAL rewrites the file's header.
absl::Status Configure(Db& db, const SqliteStore::Options& options) {
  // WAL: readers never block the writer, and a commit is one append + fsync of the log.
  absl::StatusOr<Statement> wal = db.Prepare("enable WAL", "PRAGMA journal_mode = WAL");
  if (!wal.ok()) return wal.status();
  absl::StatusOr<bool> row = wal->Step();
  if (!row.ok()) return row.status();
  const std::string mode = *row ? wal->Text(0) : "";
  if (mode != "wal" && !(mode == "memory" && db.path() == ":memory:")) {
    return absl::FailedPreconditionError(absl::StrCat("enable WAL on ", db.path(),
                                                      ": journal mode is '", mode,
                                                      "' (WAL needs a local "
                                                      "filesystem with shared-memory support)"));
  }
  // FULL fsyncs the WAL at every commit: an acknowledged sample or result survives power
  // loss, not only a process crash (NORMAL would only survive the latter).
  if (absl::Status s =
          db.Exec("configure connection", "PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON");
      !s.ok()) {
    return s;
  }
  absl::StatusOr<int64_t> fk = db.QueryInt("check foreign keys", "PRAGMA foreign_keys");
  if (!fk.ok()) return fk.status();
  if (*fk != 1) return absl::FailedPreconditionError("SQLite was built without foreign keys");
  if (options.max_db_bytes > 0) {
    absl::StatusOr<int64_t> page_size = db.QueryInt("read page size", "PRAGMA page_size");
    if (!page_size.ok()) return page_size.status();
    // PRAGMAs take no bound parameters; the value is a number computed here.
    const int64_t pages = std::max<int64_t>(1, options.max_db_bytes / *page_size);
    if (absl::Status s =
            db.Exec("set max_page_count", absl::StrCat("PRAGMA max_page_count = ", pages));
        !s.ok()) {
      return s;
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<SqliteStore>> SqliteStore::Open(const std::string& path) {
  return Open(path, Options());
}

absl::StatusOr<std::unique_ptr<SqliteStore>> SqliteStore::Open(const std::string& path,
                                                               const Options& options) {
  absl::StatusOr<std::unique_ptr<Db>> db = Db::Open(path);
  if (!db.ok()) return db.status();
  if (int rc = sqlite3_busy_timeout((*db)->raw(), options.busy_timeout_ms); rc != SQLITE_OK) {
    return sqlite::ErrorStatus((*db)->raw(), rc, "set busy timeout");
  }
  // Whose file it is and whether it is sound, before anything writes to it.
  if (absl::Status s = sqlite::CheckOwnership(**db); !s.ok()) return s;
  if (options.check_integrity) {
    if (absl::Status s = sqlite::CheckIntegrity(**db); !s.ok()) return s;
  }
  if (absl::Status s = Configure(**db, options); !s.ok()) return s;
  if (absl::Status s = sqlite::ApplyMigrations(**db, sqlite::StoreMigrations()); !s.ok()) {
    return s;
  }
  return std::unique_ptr<SqliteStore>(new SqliteStore(*std::move(db)));
}

absl::StatusOr<uint64_t> SqliteStore::CreateExperiment(const v1::Experiment& experiment) {
  if (absl::Status s = CheckNewExperiment(experiment); !s.ok()) return s;
  // Serialize before taking the lock: it is the only part that depends on input size.
  std::vector<std::string> specs;
  for (int i = 0; i < experiment.cells_size(); ++i) {
    v1::CellSpec cell = experiment.cells(i);
    cell.set_index(static_cast<uint32_t>(i));
    absl::StatusOr<std::string> spec = sqlite::Serialize(cell, "cell spec");
    if (!spec.ok()) return spec.status();
    specs.push_back(*std::move(spec));
  }

  absl::MutexLock lock(&mu_);
  absl::StatusOr<Transaction> txn = Transaction::Begin(*db_, Transaction::Mode::kWrite);
  if (!txn.ok()) return txn.status();
  if (absl::Status s =
          db_->Execute("insert experiment",
                       "INSERT INTO experiments (name, state, file_name, matrix_text, repeats, "
                       "created_unix_ms, submitted_by) VALUES (?, ?, ?, ?, ?, ?, ?)",
                       experiment.name(), sqlite::ExperimentStateName(v1::EXPERIMENT_QUEUED),
                       experiment.file_name(), experiment.matrix_text(), experiment.repeats(),
                       experiment.created_unix_ms(), experiment.submitted_by());
      !s.ok()) {
    return s;
  }
  const int64_t id = db_->LastInsertRowid();
  {
    absl::StatusOr<Statement> insert = db_->Prepare(
        "insert cell",
        "INSERT INTO cells (experiment_id, cell_index, label, spec) VALUES (?, ?, ?, ?)");
    if (!insert.ok()) return insert.status();
    for (int i = 0; i < experiment.cells_size(); ++i) {
      insert->BindAll(id, i, workloads::CellLabel(experiment.cells(i)),
                      BlobArg{specs[static_cast<size_t>(i)]});
      if (absl::Status s = insert->Run(); !s.ok()) return s;
      if (absl::Status s = insert->Reset(); !s.ok()) return s;
    }
  }
  {
    // Ids in RunOrder (repeat-major): placement in id order then spreads each cell's
    // repeats over the experiment, and `blkbench sim` runs them in the same order.
    absl::StatusOr<Statement> insert =
        db_->Prepare("insert run",
                     "INSERT INTO runs (experiment_id, cell_index, repeat, attempt, state, "
                     "created_unix_ms) VALUES (?, ?, ?, 0, ?, ?)");
    if (!insert.ok()) return insert.status();
    const std::string queued = sqlite::RunStateName(v1::RUN_QUEUED);
    for (const RunSlot& run :
         RunOrder(static_cast<uint32_t>(experiment.cells_size()), experiment.repeats())) {
      insert->BindAll(id, run.cell_index, run.repeat, queued, experiment.created_unix_ms());
      if (absl::Status s = insert->Run(); !s.ok()) return s;
      if (absl::Status s = insert->Reset(); !s.ok()) return s;
    }
  }
  if (absl::Status s = txn->Commit(); !s.ok()) return s;
  return static_cast<uint64_t>(id);
}

absl::StatusOr<v1::Experiment> SqliteStore::GetExperiment(uint64_t id, bool with_results) {
  absl::MutexLock lock(&mu_);
  absl::StatusOr<Transaction> txn = Transaction::Begin(*db_, Transaction::Mode::kRead);
  if (!txn.ok()) return txn.status();
  const auto key = static_cast<int64_t>(id);

  v1::Experiment experiment;
  {
    absl::StatusOr<Statement> select = db_->Prepare(
        "get experiment", absl::StrCat("SELECT ", sqlite::kExperimentColumns,
                                       ", e.matrix_text FROM experiments e WHERE e.id = ?"));
    if (!select.ok()) return select.status();
    absl::StatusOr<bool> row = select->BindAll(key).Step();
    if (!row.ok()) return row.status();
    if (!*row) return absl::NotFoundError(absl::StrCat("experiment ", id, " not found"));
    absl::StatusOr<v1::Experiment> read = sqlite::ExperimentFromRow(*select);
    if (!read.ok()) return read.status();
    experiment = *std::move(read);
    experiment.set_matrix_text(select->Text(sqlite::kExperimentColumnCount));
  }
  {
    absl::StatusOr<Statement> select = db_->Prepare(
        "get cells",
        "SELECT cell_index, spec FROM cells WHERE experiment_id = ? ORDER BY cell_index");
    if (!select.ok()) return select.status();
    select->BindAll(key);
    while (true) {
      absl::StatusOr<bool> row = select->Step();
      if (!row.ok()) return row.status();
      if (!*row) break;
      if (absl::Status s = sqlite::ParseBlob(
              select->Blob(1), absl::StrCat("cell ", select->Int(0), " of experiment ", id),
              *experiment.add_cells());
          !s.ok()) {
        return s;
      }
    }
  }
  std::unordered_map<uint64_t, v1::Run*> runs;
  {
    absl::StatusOr<Statement> select = db_->Prepare(
        "get runs", absl::StrCat("SELECT ", sqlite::kRunColumns,
                                 " FROM runs r WHERE r.experiment_id = ? ORDER BY r.id"));
    if (!select.ok()) return select.status();
    select->BindAll(key);
    absl::Status rows = select->ForEachRow([&](Statement& row) -> absl::Status {
      absl::StatusOr<v1::Run> run = sqlite::RunFromRow(row);
      if (!run.ok()) return run.status();
      *experiment.add_runs() = *std::move(run);
      return absl::OkStatus();
    });
    if (!rows.ok()) return rows;
  }
  for (v1::Run& run : *experiment.mutable_runs()) runs[run.id()] = &run;
  if (absl::Status s = FillRunDetails(runs, "r.experiment_id = ?1", key, with_results); !s.ok()) {
    return s;
  }
  return experiment;
}

absl::StatusOr<std::vector<v1::Experiment>> SqliteStore::ListExperiments(uint32_t limit) {
  absl::MutexLock lock(&mu_);
  absl::StatusOr<Statement> select = db_->Prepare(
      "list experiments", absl::StrCat("SELECT ", sqlite::kExperimentColumns,
                                       " FROM experiments e ORDER BY e.id DESC LIMIT ?"));
  if (!select.ok()) return select.status();
  select->BindAll(limit == 0 ? int64_t{-1} : int64_t{limit});  // LIMIT -1: no limit
  return select->Collect<v1::Experiment>(sqlite::ExperimentFromRow);
}

absl::Status SqliteStore::UpdateExperimentState(uint64_t id, v1::ExperimentState state,
                                                const std::string& error,
                                                int64_t finished_unix_ms) {
  if (!v1::ExperimentState_IsValid(state)) {
    return absl::InvalidArgumentError(absl::StrCat("UpdateExperimentState: bad state ", state));
  }
  absl::MutexLock lock(&mu_);
  if (absl::Status s = db_->Execute(
          "update experiment state",
          "UPDATE experiments SET state = ?, error = ?, finished_unix_ms = ? WHERE id = ?",
          sqlite::ExperimentStateName(state), error, finished_unix_ms, static_cast<int64_t>(id));
      !s.ok()) {
    return s;
  }
  if (db_->Changes() == 0)
    return absl::NotFoundError(absl::StrCat("experiment ", id, " not found"));
  return absl::OkStatus();
}

absl::Status SqliteStore::RecordCancel(uint64_t id, const std::string& who) {
  absl::MutexLock lock(&mu_);
  if (absl::Status s =
          db_->Execute("record cancel", "UPDATE experiments SET canceled_by = ? WHERE id = ?",
                       who.empty() ? std::string("unknown") : who, static_cast<int64_t>(id));
      !s.ok()) {
    return s;
  }
  if (db_->Changes() == 0)
    return absl::NotFoundError(absl::StrCat("experiment ", id, " not found"));
  return absl::OkStatus();
}

}  // namespace blkbench
