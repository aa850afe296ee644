// SqliteConn (see sqlite_conn.h): opening and configuring the file, statements, rows and
// transactions over sqlite_db.h.
#include "controller/store/sqlite_conn.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "controller/store/sqlite_open_checks.h"

namespace blkbench::sqlite {
namespace {

// Pragmas are per connection, so every open sets them. Called once the file passed the
// checks: journal_mode=WAL rewrites the file's header.
absl::Status Configure(Db& db, const ConnOptions& options) {
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
    return db.Exec("set max_page_count", absl::StrCat("PRAGMA max_page_count = ", pages));
  }
  return absl::OkStatus();
}

// A statement's rows, copied out as SQLite typed them (the statement goes back to the
// cache right after).
class SqliteRows final : public sql::Rows {
 public:
  void Append(const Statement& row) {
    std::vector<Cell>& cells = rows_.emplace_back(static_cast<size_t>(row.Columns()));
    for (int c = 0; c < row.Columns(); ++c) {
      Cell& cell = cells[static_cast<size_t>(c)];
      cell.type = row.Type(c);
      if (cell.type == SQLITE_INTEGER) cell.i = row.Int(c);
      if (cell.type == SQLITE_FLOAT) cell.d = row.Double(c);
      if (cell.type == SQLITE_TEXT) cell.s = row.Text(c);
      if (cell.type == SQLITE_BLOB) cell.s = row.Blob(c);
    }
  }
  int size() const override { return static_cast<int>(rows_.size()); }
  bool IsNull(int r, int c) const override { return At(r, c).type == SQLITE_NULL; }
  int64_t Int(int r, int c) const override {
    const Cell& cell = At(r, c);
    return cell.type == SQLITE_FLOAT ? static_cast<int64_t>(cell.d) : cell.i;
  }
  double Double(int r, int c) const override {
    const Cell& cell = At(r, c);
    return cell.type == SQLITE_INTEGER ? static_cast<double>(cell.i) : cell.d;
  }
  bool Bool(int r, int c) const override { return Int(r, c) != 0; }
  std::string Text(int r, int c) const override { return At(r, c).s; }
  std::string Bytes(int r, int c) const override { return At(r, c).s; }

 private:
  struct Cell {
    int type = SQLITE_NULL;
    int64_t i = 0;
    double d = 0;
    std::string s;  // TEXT or BLOB
  };
  const Cell& At(int r, int c) const {
    return rows_[static_cast<size_t>(r)][static_cast<size_t>(c)];
  }
  std::vector<std::vector<Cell>> rows_;
};

}  // namespace

const sql::Dialect& SqliteConn::SqliteDialect() {
  static const sql::Dialect kDialect{
      .name = "SQLite",
      // AUTOINCREMENT: ids are never reused, even after deletes. Only an explicit rowid
      // alias is guaranteed to survive VACUUM, so ids others refer to are INTEGER PRIMARY KEY.
      .serial = "INTEGER PRIMARY KEY AUTOINCREMENT",
      .rowid = "INTEGER PRIMARY KEY",
      .integer = "INTEGER",
      .real = "REAL",
      .blob = "BLOB",
      .boolean = "INTEGER",
      .without_rowid = " WITHOUT ROWID",
      .lock_rows = "",   // BEGIN IMMEDIATE holds the write lock
      .byte_order = "",  // TEXT sorts by bytes (BINARY collation)
      .lock_for_import = "",
      .after_import = "",  // AUTOINCREMENT follows explicit ids (sqlite_sequence)
  };
  return kDialect;
}

absl::StatusOr<std::unique_ptr<SqliteConn>> SqliteConn::Open(const std::string& path,
                                                             const ConnOptions& options) {
  absl::StatusOr<std::unique_ptr<Db>> db = Db::Open(path);
  if (!db.ok()) return db.status();
  if (int rc = sqlite3_busy_timeout((*db)->raw(), options.busy_timeout_ms); rc != SQLITE_OK) {
    return ErrorStatus((*db)->raw(), rc, "set busy timeout");
  }
  // Whose file it is and whether it is sound, before anything writes to it.
  if (absl::Status s = CheckOwnership(**db); !s.ok()) return s;
  if (options.check_integrity) {
    if (absl::Status s = CheckIntegrity(**db); !s.ok()) return s;
  }
  if (absl::Status s = Configure(**db, options); !s.ok()) return s;
  return std::unique_ptr<SqliteConn>(new SqliteConn(*std::move(db)));
}

absl::StatusOr<sql::Result> SqliteConn::Query(absl::string_view op, const std::string& sql,
                                              const sql::Params& params) {
  absl::StatusOr<Statement> stmt = db_->Prepare(op, sql);
  if (!stmt.ok()) return stmt.status();
  using Type = sql::Params::Value::Type;
  for (const sql::Params::Value& v : params.values()) {
    switch (v.type) {
      case Type::kNull:
        stmt->BindNull();
        break;
      case Type::kInt:
      case Type::kBool:
        stmt->BindInt(v.i);
        break;
      case Type::kDouble:
        stmt->BindDouble(v.d);
        break;
      case Type::kText:
        stmt->BindText(v.s);
        break;
      case Type::kBlob:
        stmt->BindBlob(v.s);
        break;
    }
  }
  auto rows = std::make_unique<SqliteRows>();
  if (absl::Status s = stmt->ForEachRow([&](Statement& row) {
        rows->Append(row);
        return absl::OkStatus();
      });
      !s.ok()) {
    return s;
  }
  return sql::Result(std::move(rows), db_->Changes());
}

absl::Status SqliteConn::Exec(absl::string_view op, const std::string& script) {
  return db_->Exec(op, script);
}

absl::Status SqliteConn::Begin(Mode mode) {
  const bool write = mode == Mode::kWrite;
  return db_->Execute(write ? "begin write transaction" : "begin read transaction",
                      write ? "BEGIN IMMEDIATE" : "BEGIN DEFERRED");
}

absl::Status SqliteConn::Commit() {
  if (!db_->InTransaction()) {
    // SQLite already rolled the transaction back after an error a caller ignored.
    return absl::InternalError("commit: transaction was rolled back by SQLite");
  }
  absl::Status status = db_->Execute("commit", "COMMIT");
  if (!status.ok()) Rollback();
  return status;
}

void SqliteConn::Rollback() {
  // Nothing useful can be done if ROLLBACK itself fails: SQLite then rolls back when the
  // connection is next used or closed, and the caller already has an error.
  if (db_->InTransaction()) (void)db_->Exec("rollback", "ROLLBACK");
}

// Through the statement cache: parsed once, not once per report.
absl::Status SqliteConn::Savepoint(bool release_previous) {
  if (release_previous) {
    if (absl::Status s = db_->Execute("release savepoint", "RELEASE SAVEPOINT part"); !s.ok()) {
      return s;
    }
  }
  return db_->Execute("savepoint", "SAVEPOINT part");
}

absl::Status SqliteConn::RollbackToSavepoint() {
  return db_->Execute("rollback to savepoint", "ROLLBACK TO SAVEPOINT part");
}

absl::StatusOr<int64_t> SqliteConn::LockSchema() {
  // BEGIN IMMEDIATE already serializes openers; re-check under the lock what Open checked.
  if (absl::Status s = CheckOwnership(*db_); !s.ok()) return s;
  absl::StatusOr<int64_t> app_id = db_->QueryInt("read application id", "PRAGMA application_id");
  if (!app_id.ok()) return app_id.status();
  if (*app_id != kApplicationId) {  // new, or a store from before application_id was set
    if (absl::Status s = db_->Exec(absl::StrCat("set application_id of ", db_->path()),
                                   absl::StrCat("PRAGMA application_id = ", kApplicationId));
        !s.ok()) {
      return s;
    }
  }
  return db_->QueryInt("read schema version", "PRAGMA user_version");
}

absl::Status SqliteConn::RecordMigration(int version, const char* description) {
  // PRAGMAs take no bound parameters; the value is a compile-time constant's.
  return db_->Exec(absl::StrCat("record schema migration ", version, " (", description, ")"),
                   absl::StrCat("PRAGMA user_version = ", version));
}

}  // namespace blkbench::sqlite
