// A thin RAII layer over the SQLite C API for SqliteConn: a connection, cached prepared
// statements with positional binding, and sqlite codes → absl::Status.
#ifndef BLKBENCH_CONTROLLER_STORE_SQLITE_DB_H_
#define BLKBENCH_CONTROLLER_STORE_SQLITE_DB_H_

#include <sqlite3.h>

#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/container/node_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace blkbench::sqlite {

// Maps a SQLite result code to a status naming `op` and SQLite's message:
// SQLITE_FULL/NOMEM → ResourceExhausted, BUSY/LOCKED → Unavailable, CONSTRAINT/TOOBIG →
// InvalidArgument, CORRUPT/NOTADB → DataLoss, READONLY/CANTOPEN/PERM → FailedPrecondition,
// anything else → Internal. `db` may be null (then only sqlite3_errstr is used).
absl::Status ErrorStatus(sqlite3* db, int rc, absl::string_view op);

// A prepared statement. Parameters are bound positionally in call order (?1, ?2, ...);
// the first bind error is remembered and returned by the next Step/Run, so call sites
// stay short and no return code goes unchecked. Not thread-safe; owned by one Db user.
// One that Db::Prepare took from its cache goes back there (reset, bindings cleared) when
// destroyed instead of being finalized.
class Statement {
 public:
  // `in_use` is the cache entry's flag, cleared on destruction; null: finalized instead.
  Statement(sqlite3* db, sqlite3_stmt* stmt, std::string op, bool* in_use = nullptr);
  Statement(Statement&&) noexcept;
  Statement& operator=(Statement&&) = delete;
  ~Statement();

  Statement& BindInt(int64_t value);
  Statement& BindDouble(double value);
  Statement& BindText(absl::string_view value);
  Statement& BindBlob(absl::string_view bytes);
  Statement& BindNull();
  // Binds each argument by type: integers and bool as INTEGER, floating point as REAL,
  // anything convertible to absl::string_view as TEXT.
  template <typename... Args>
  Statement& BindAll(const Args&... args) {
    (BindOne(args), ...);
    return *this;
  }

  // Advances: true when a row is available, false when done.
  // Steps through every row, calling `fn(*this)` on each; stops at the first error from
  // SQLite or from `fn`.
  template <typename Fn>
  absl::Status ForEachRow(Fn fn) {
    while (true) {
      absl::StatusOr<bool> row = Step();
      if (!row.ok()) return row.status();
      if (!*row) return absl::OkStatus();
      if (absl::Status s = fn(*this); !s.ok()) return s;
    }
  }
  // Every row converted by `from_row` (absl::StatusOr<T>(Statement&)), in order.
  template <typename T, typename FromRow>
  absl::StatusOr<std::vector<T>> Collect(FromRow from_row) {
    std::vector<T> out;
    absl::Status s = ForEachRow([&](Statement& row) -> absl::Status {
      absl::StatusOr<T> value = from_row(row);
      if (!value.ok()) return value.status();
      out.push_back(*std::move(value));
      return absl::OkStatus();
    });
    if (!s.ok()) return s;
    return out;
  }
  absl::StatusOr<bool> Step();
  // Steps to completion, ignoring any rows (for INSERT/UPDATE/DELETE).
  absl::Status Run();

  // Column accessors for the current row (0-based). NULL reads as 0 / "".
  int64_t Int(int col) const;
  double Double(int col) const;
  bool IsNull(int col) const;
  // The current row's width and a column's SQLITE_INTEGER/FLOAT/TEXT/BLOB/NULL.
  int Columns() const;
  int Type(int col) const;
  std::string Text(int col) const;
  std::string Blob(int col) const;

 private:
  sqlite3* db_;
  sqlite3_stmt* stmt_;
  std::string op_;
  bool* in_use_;
  int next_param_ = 1;
  absl::Status bind_status_;

  void CheckBind(int rc);
  template <typename T>
  void BindOne(const T& value) {
    if constexpr (std::is_same_v<T, bool>) {
      BindInt(value ? 1 : 0);
    } else if constexpr (std::is_integral_v<T>) {
      BindInt(static_cast<int64_t>(value));
    } else if constexpr (std::is_floating_point_v<T>) {
      BindDouble(value);
    } else {
      BindText(absl::string_view(value));
    }
  }
};

// One open connection. Not thread-safe: the owner serializes access (SqlStore holds a
// mutex around its SqliteConn).
class Db {
 public:
  // Opens (creating if missing) the database file at `path`.
  static absl::StatusOr<std::unique_ptr<Db>> Open(const std::string& path);
  ~Db();
  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;

  // Prepares one SQL statement; `op` names the operation in error messages. Statements are
  // cached by their text: the store runs the same few dozen on every report, and parsing
  // each anew was the SQLite parser's ~3 % of the controller's CPU under load. A text that
  // is in use already (a nested query) is prepared afresh, uncached.
  absl::StatusOr<Statement> Prepare(absl::string_view op, absl::string_view sql);
  // How many statements the cache holds (tests).
  size_t CachedStatements() const { return cache_.size(); }
  // Prepares, binds `args` (see Statement::BindAll) and runs one statement to completion.
  template <typename... Args>
  absl::Status Execute(absl::string_view op, absl::string_view sql, const Args&... args) {
    absl::StatusOr<Statement> stmt = Prepare(op, sql);
    if (!stmt.ok()) return stmt.status();
    return stmt->BindAll(args...).Run();
  }
  // Runs a script of statements without parameters (schema, pragmas, BEGIN/COMMIT).
  absl::Status Exec(absl::string_view op, const std::string& sql);
  // Runs a single-row, single-integer query such as "PRAGMA user_version".
  absl::StatusOr<int64_t> QueryInt(absl::string_view op, absl::string_view sql);

  // Rows changed by the most recent INSERT/UPDATE/DELETE.
  int64_t Changes() const { return sqlite3_changes64(db_); }
  bool InTransaction() const { return sqlite3_get_autocommit(db_) == 0; }

  sqlite3* raw() const { return db_; }
  const std::string& path() const { return path_; }

 private:
  struct Cached {
    sqlite3_stmt* stmt;
    bool in_use;
  };
  Db(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}
  sqlite3* db_;
  std::string path_;
  // node_hash_map: a Statement points at its entry's in_use flag across inserts.
  absl::node_hash_map<std::string, Cached> cache_;
};

}  // namespace blkbench::sqlite

#endif  // BLKBENCH_CONTROLLER_STORE_SQLITE_DB_H_
