// RAII wrappers over sqlite3 / sqlite3_stmt and the SQLite → absl::Status mapping
// (see sqlite_db.h).
#include "controller/store/sqlite_db.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace blkbench::sqlite {

absl::Status ErrorStatus(sqlite3* db, int rc, absl::string_view op) {
  // sqlite3_errmsg describes the most recent failing call on this connection, which is
  // the one that produced `rc` as long as the status is built right after the failure.
  const char* detail = db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  std::string msg = absl::StrCat(op, ": ", detail, " (sqlite code ", rc, ")");
  switch (rc & 0xff) {
    case SQLITE_FULL:
    case SQLITE_NOMEM:
      return absl::ResourceExhaustedError(msg);
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return absl::UnavailableError(msg);
    case SQLITE_CONSTRAINT:
    case SQLITE_TOOBIG:
    case SQLITE_MISMATCH:
      return absl::InvalidArgumentError(msg);
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      return absl::DataLossError(msg);
    case SQLITE_READONLY:
    case SQLITE_CANTOPEN:
    case SQLITE_PERM:
    case SQLITE_AUTH:
      return absl::FailedPreconditionError(msg);
    default:
      return absl::InternalError(msg);
  }
}

Statement::Statement(sqlite3* db, sqlite3_stmt* stmt, std::string op, bool* in_use)
    : db_(db), stmt_(stmt), op_(std::move(op)), in_use_(in_use) {}

Statement::Statement(Statement&& other) noexcept
    : db_(other.db_),
      stmt_(std::exchange(other.stmt_, nullptr)),
      op_(std::move(other.op_)),
      in_use_(std::exchange(other.in_use_, nullptr)),
      next_param_(other.next_param_),
      bind_status_(std::move(other.bind_status_)) {}

Statement::~Statement() {
  if (stmt_ == nullptr) return;
  if (in_use_ != nullptr) {
    // Back to the cache: reset releases what the statement holds (a read cursor, a lock),
    // like finalize; both repeat the last step's error code, which was already reported.
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
    *in_use_ = false;
    return;
  }
  sqlite3_finalize(stmt_);
}

void Statement::CheckBind(int rc) {
  if (rc != SQLITE_OK && bind_status_.ok()) {
    bind_status_ = ErrorStatus(db_, rc, absl::StrCat(op_, " (bind ?", next_param_, ")"));
  }
  ++next_param_;
}

Statement& Statement::BindInt(int64_t value) {
  CheckBind(sqlite3_bind_int64(stmt_, next_param_, value));
  return *this;
}

Statement& Statement::BindDouble(double value) {
  CheckBind(sqlite3_bind_double(stmt_, next_param_, value));
  return *this;
}

Statement& Statement::BindText(absl::string_view value) {
  // A null data pointer would bind SQL NULL; an empty value must stay ''.
  const char* data = value.data() != nullptr ? value.data() : "";
  CheckBind(
      sqlite3_bind_text64(stmt_, next_param_, data, value.size(), SQLITE_TRANSIENT, SQLITE_UTF8));
  return *this;
}

Statement& Statement::BindBlob(absl::string_view bytes) {
  // An empty proto serializes to zero bytes; bind a zero-length blob, not NULL.
  if (bytes.empty()) {
    CheckBind(sqlite3_bind_zeroblob(stmt_, next_param_, 0));
  } else {
    CheckBind(
        sqlite3_bind_blob64(stmt_, next_param_, bytes.data(), bytes.size(), SQLITE_TRANSIENT));
  }
  return *this;
}

absl::StatusOr<bool> Statement::Step() {
  if (!bind_status_.ok()) return bind_status_;
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return ErrorStatus(db_, rc, op_);
}

absl::Status Statement::Run() {
  return ForEachRow([](Statement&) { return absl::OkStatus(); });
}

Statement& Statement::BindNull() {
  CheckBind(sqlite3_bind_null(stmt_, next_param_));
  return *this;
}

int Statement::Columns() const { return sqlite3_data_count(stmt_); }

int Statement::Type(int col) const { return sqlite3_column_type(stmt_, col); }

int64_t Statement::Int(int col) const { return sqlite3_column_int64(stmt_, col); }

double Statement::Double(int col) const { return sqlite3_column_double(stmt_, col); }

bool Statement::IsNull(int col) const { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }

std::string Statement::Text(int col) const {
  const unsigned char* text = sqlite3_column_text(stmt_, col);
  int size = sqlite3_column_bytes(stmt_, col);
  if (text == nullptr) return "";
  return std::string(reinterpret_cast<const char*>(text), static_cast<size_t>(size));
}

std::string Statement::Blob(int col) const {
  const void* blob = sqlite3_column_blob(stmt_, col);
  int size = sqlite3_column_bytes(stmt_, col);
  if (blob == nullptr) return "";
  return std::string(static_cast<const char*>(blob), static_cast<size_t>(size));
}

absl::StatusOr<std::unique_ptr<Db>> Db::Open(const std::string& path) {
  sqlite3* raw = nullptr;
  // NOMUTEX: the owner serializes all use of the connection with its own mutex.
  int rc =
      sqlite3_open_v2(path.c_str(), &raw,
                      SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    absl::Status status = ErrorStatus(raw, rc, absl::StrCat("open sqlite database ", path));
    sqlite3_close(raw);  // a handle is returned even on failure (or null: a no-op)
    return status;
  }
  std::unique_ptr<Db> db(new Db(raw, path));
  rc = sqlite3_extended_result_codes(raw, 1);
  if (rc != SQLITE_OK) return ErrorStatus(raw, rc, "enable extended result codes");
  return db;
}

Db::~Db() {
  // Uncached statements are finalized by their owners first; close_v2 defers if any remain.
  for (auto& [sql, cached] : cache_) sqlite3_finalize(cached.stmt);
  sqlite3_close_v2(db_);
}

absl::StatusOr<Statement> Db::Prepare(absl::string_view op, absl::string_view sql) {
  auto it = cache_.find(sql);
  if (it != cache_.end() && !it->second.in_use) {
    it->second.in_use = true;
    return Statement(db_, it->second.stmt, std::string(op), &it->second.in_use);
  }
  sqlite3_stmt* stmt = nullptr;
  int rc = sqlite3_prepare_v2(db_, sql.data(), static_cast<int>(sql.size()), &stmt, nullptr);
  if (rc != SQLITE_OK) {
    return ErrorStatus(db_, rc, absl::StrCat(op, " (prepare)"));
  }
  if (it != cache_.end()) return Statement(db_, stmt, std::string(op));  // nested use
  Cached& entry = cache_[sql];
  entry = Cached{.stmt = stmt, .in_use = true};
  return Statement(db_, stmt, std::string(op), &entry.in_use);
}

absl::Status Db::Exec(absl::string_view op, const std::string& sql) {
  char* err = nullptr;
  int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err);
  sqlite3_free(err);  // the same text is available from sqlite3_errmsg
  if (rc != SQLITE_OK) return ErrorStatus(db_, rc, op);
  return absl::OkStatus();
}

absl::StatusOr<int64_t> Db::QueryInt(absl::string_view op, absl::string_view sql) {
  absl::StatusOr<Statement> stmt = Prepare(op, sql);
  if (!stmt.ok()) return stmt.status();
  absl::StatusOr<bool> row = stmt->Step();
  if (!row.ok()) return row.status();
  if (!*row) return absl::InternalError(absl::StrCat(op, ": query returned no row"));
  return stmt->Int(0);
}

}  // namespace blkbench::sqlite
