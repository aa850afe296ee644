// The dialect seam under SqlStore: one connection to an SQL database (SQLite or
// PostgreSQL), queries written once with ?-placeholders, rows read by column, transactions,
// and each database's error codes mapped to the same absl::Status codes.
#ifndef BLKBENCH_CONTROLLER_STORE_SQL_CONN_H_
#define BLKBENCH_CONTROLLER_STORE_SQL_CONN_H_

#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace blkbench::sql {

// What differs in the SQL text between the databases. Everything else — upserts (ON
// CONFLICT … DO UPDATE/NOTHING), RETURNING, SAVEPOINT, LIMIT — is written once: SQLite
// (3.35+) and PostgreSQL spell it the same.
struct Dialect {
  const char* name;  // "SQLite", "PostgreSQL"
  // Column types the schema (schema.cc) substitutes for {serial}, {rowid}, {int}, {real},
  // {blob}, {bool} and {without_rowid}.
  const char* serial;         // an id that is never handed out twice
  const char* rowid;          // an id other tables refer to
  const char* integer;        // 64-bit
  const char* real;           // double
  const char* blob;           // bytes (serialized protobufs)
  const char* boolean;        // bound and read with Params::Add(bool) / Result::Bool
  const char* without_rowid;  // a table clustered on its primary key
  // Appended to a SELECT whose rows the transaction will update ("" where BEGIN already
  // locked the database).
  const char* lock_rows;
  // Appended to an ORDER BY column: byte order, as SQLite sorts TEXT, in every locale.
  const char* byte_order;
  // Run before a bulk copy with explicit ids (Import), and after it per table ({table})
  // so new rows continue after the copied ids; "" where nothing is needed.
  const char* lock_for_import;
  const char* after_import;
};

// Marks a parameter as bytes (BLOB, bytea); strings bind as text. `null` binds NULL.
struct Blob {
  absl::string_view bytes;
  bool null = false;
};

// The parameters of one statement, in placeholder order.
class Params {
 public:
  struct Value {
    enum class Type { kNull, kInt, kDouble, kBool, kText, kBlob };
    Type type = Type::kNull;
    int64_t i = 0;
    double d = 0;
    std::string s;
  };

  // uint64 is stored as its two's-complement int64 and read back bit-exact by U64().
  void Add(int64_t v) { values_.push_back({Value::Type::kInt, v, 0, {}}); }
  void Add(uint64_t v) { Add(static_cast<int64_t>(v)); }
  void Add(double v) { values_.push_back({Value::Type::kDouble, 0, v, {}}); }
  void Add(bool v) { values_.push_back({Value::Type::kBool, v ? 1 : 0, 0, {}}); }
  void Add(absl::string_view v) { values_.push_back({Value::Type::kText, 0, 0, std::string(v)}); }
  void Add(const std::string& v) { Add(absl::string_view(v)); }
  void Add(const char* v) { Add(absl::string_view(v)); }
  void Add(Blob v) {
    values_.push_back(
        {v.null ? Value::Type::kNull : Value::Type::kBlob, 0, 0, std::string(v.bytes)});
  }
  template <typename T,
            std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool> &&
                                 !std::is_same_v<T, int64_t> && !std::is_same_v<T, uint64_t>,
                             int> = 0>
  void Add(T v) {
    Add(static_cast<int64_t>(v));
  }

  const std::vector<Value>& values() const { return values_; }

 private:
  std::vector<Value> values_;
};

// The rows of one statement, read by (row, col); what a column holds is the schema's.
class Rows {
 public:
  virtual ~Rows() = default;
  virtual int size() const = 0;
  virtual bool IsNull(int row, int col) const = 0;  // NULL reads as 0, false, ""
  virtual int64_t Int(int row, int col) const = 0;
  virtual double Double(int row, int col) const = 0;
  virtual bool Bool(int row, int col) const = 0;
  virtual std::string Text(int row, int col) const = 0;
  virtual std::string Bytes(int row, int col) const = 0;  // a {blob} column
};

// A statement's outcome: its rows (RETURNING included) and the rows it changed.
class Result {
 public:
  Result(std::unique_ptr<Rows> rows, int64_t affected)
      : rows_(std::move(rows)), affected_(affected) {}

  int rows() const { return rows_->size(); }
  int64_t affected() const { return affected_; }
  bool IsNull(int row, int col) const { return rows_->IsNull(row, col); }
  int64_t Int(int row, int col) const { return rows_->Int(row, col); }
  uint64_t U64(int row, int col) const { return static_cast<uint64_t>(Int(row, col)); }
  double Double(int row, int col) const { return rows_->Double(row, col); }
  bool Bool(int row, int col) const { return rows_->Bool(row, col); }
  std::string Text(int row, int col) const { return rows_->Text(row, col); }
  std::string Bytes(int row, int col) const { return rows_->Bytes(row, col); }

 private:
  std::unique_ptr<Rows> rows_;
  int64_t affected_;
};

// One connection. Not thread-safe: SqlStore serializes its use with a mutex.
//
// Errors: every failure is a status naming `op` and the database's message, classified
// the same way on both databases: busy, locked, a serialization failure, a deadlock, a
// lock timeout or a lost connection → Unavailable (transient: retry); a full disk or out
// of memory → ResourceExhausted; a constraint (unique, foreign key) or bad data →
// InvalidArgument; corruption → DataLoss; read-only, permissions → FailedPrecondition;
// anything else Internal.
class Conn {
 public:
  enum class Mode {
    kRead,   // a consistent snapshot for multi-query reads
    kWrite,  // takes the write lock up front (SQLite) / a read-write transaction
  };
  virtual ~Conn() = default;

  virtual const Dialect& dialect() const = 0;
  // The database for messages: the file's path, or host:port/db without credentials.
  virtual const std::string& name() const = 0;

  // Runs one statement, `sql` with ? (or ?N) placeholders bound to `params`, prepared
  // once per connection and text. Outside a transaction, a lost connection is
  // re-established first (PostgreSQL), so the store recovers on its own.
  virtual absl::StatusOr<Result> Query(absl::string_view op, const std::string& sql,
                                       const Params& params) = 0;
  template <typename... Args>
  absl::StatusOr<Result> Run(absl::string_view op, const std::string& sql, const Args&... args) {
    Params params;
    (params.Add(args), ...);
    return Query(op, sql, params);
  }
  // A script without parameters (DDL, SAVEPOINT …), not prepared.
  virtual absl::Status Exec(absl::string_view op, const std::string& script) = 0;

  // Transactions (use Transaction below). Commit is durable when it returns OK (SQLite:
  // WAL with synchronous=FULL; PostgreSQL: synchronous_commit on); on error nothing of
  // the transaction is stored, or — for a connection lost during COMMIT — the outcome is
  // unknown (the store's writes are idempotent: resend).
  virtual absl::Status Begin(Mode mode) = 0;
  virtual absl::Status Commit() = 0;
  virtual void Rollback() = 0;
  // The savepoint of a write transaction's current part (CommitReports: one per
  // report): Savepoint opens it, releasing the previous part's if `release_previous`
  // (COMMIT releases the last); RollbackToSavepoint undoes what was written since.
  virtual absl::Status Savepoint(bool release_previous) = 0;
  virtual absl::Status RollbackToSavepoint() = 0;

  // Schema versioning for ApplyMigrations (schema.h), inside its write transaction.
  // LockSchema serializes concurrent openers, refuses a database that is not a blkbench
  // store (FailedPrecondition, nothing written) and returns the schema version (0: new).
  // RecordMigration marks `version` applied.
  virtual absl::StatusOr<int64_t> LockSchema() = 0;
  virtual absl::Status RecordMigration(int version, const char* description) = 0;
};

// A transaction on a Conn, rolled back on destruction unless committed.
class Transaction {
 public:
  static absl::StatusOr<Transaction> Begin(Conn& conn, Conn::Mode mode) {
    if (absl::Status s = conn.Begin(mode); !s.ok()) return s;
    return Transaction(&conn);
  }
  Transaction(Transaction&& other) noexcept : conn_(std::exchange(other.conn_, nullptr)) {}
  Transaction& operator=(Transaction&&) = delete;
  ~Transaction() {
    if (conn_ != nullptr) conn_->Rollback();
  }
  absl::Status Commit() { return std::exchange(conn_, nullptr)->Commit(); }

 private:
  explicit Transaction(Conn* conn) : conn_(conn) {}
  Conn* conn_;  // null once committed or moved from
};

}  // namespace blkbench::sql

#endif  // BLKBENCH_CONTROLLER_STORE_SQL_CONN_H_
