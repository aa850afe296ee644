// A thin RAII layer over libpq for PgStore: a connection that prepares each statement
// once and re-connects after a lost server, query results, a transaction guard, and
// SQLSTATEs → absl::Status.
#ifndef BLKBENCH_CONTROLLER_STORE_PG_CONN_H_
#define BLKBENCH_CONTROLLER_STORE_PG_CONN_H_

#include <libpq-fe.h>

#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace blkbench::pg {

// Maps a failed libpq call to a status naming `op` and the server's message. A lost
// connection, class 08 (connection exception), 57P0x (server shutting down or starting)
// 40001/40P01 (serialization failure, deadlock) and 55P03 (lock timeout) are
// Unavailable: transient, the caller may retry. Class 53 (disk full, out of memory) is
// ResourceExhausted; 23 (constraint) and 22 (data exception) InvalidArgument; 28 and 42501
// (authentication, privilege) FailedPrecondition; XX001/XX002 (corruption) DataLoss; anything else
// Internal.
absl::Status ErrorStatus(PGconn* conn, const PGresult* result, absl::string_view op);

// Marks a query argument as bytea (sent binary); strings are sent as text.
struct Bytea {
  absl::string_view bytes;
};

// The parameters of one query, all in libpq's text format except bytea. uint64 is sent
// as its two's-complement int64 (as SqliteStore stores it) and read back bit-exact.
class Params {
 public:
  void Add(int64_t value);
  void Add(uint64_t value) { Add(static_cast<int64_t>(value)); }
  void Add(double value);  // shortest text that parses back to the same double
  void Add(bool value);
  void Add(absl::string_view text);
  void Add(Bytea value);
  template <typename T>
  void Add(T value,
           std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool> &&
                                !std::is_same_v<T, int64_t> && !std::is_same_v<T, uint64_t>,
                            int> = 0) {
    Add(static_cast<int64_t>(value));
  }
  void Add(const std::string& text) { Add(absl::string_view(text)); }
  void Add(const char* text) { Add(absl::string_view(text)); }

  int size() const { return static_cast<int>(values_.size()); }
  std::vector<const char*> Values() const;
  const int* Lengths() const { return lengths_.data(); }
  const int* Formats() const { return formats_.data(); }

 private:
  std::vector<std::string> values_;
  std::vector<int> lengths_;
  std::vector<int> formats_;
};

// The rows of one successful query (text format). Column readers take (row, col).
class Result {
 public:
  explicit Result(PGresult* result) : result_(result, &PQclear) {}

  int rows() const { return PQntuples(result_.get()); }
  // Rows an INSERT/UPDATE/DELETE touched.
  int64_t affected() const;
  bool IsNull(int row, int col) const { return PQgetisnull(result_.get(), row, col) != 0; }
  std::string Text(int row, int col) const;
  int64_t Int(int row, int col) const;
  uint64_t U64(int row, int col) const { return static_cast<uint64_t>(Int(row, col)); }
  double Double(int row, int col) const;
  bool Bool(int row, int col) const { return Text(row, col) == "t"; }
  // A bytea column, unescaped.
  std::string Bytes(int row, int col) const;
  // The command tag ("COMMIT", "INSERT 0 1", …).
  std::string command() const { return PQcmdStatus(result_.get()); }
  const PGresult* raw_result() const { return result_.get(); }

 private:
  std::unique_ptr<PGresult, void (*)(PGresult*)> result_;
};

// One connection. Not thread-safe: PgStore serializes its use with a mutex.
class Conn {
 public:
  // Connects with a libpq connection string or URI (postgresql://…). Unavailable if the
  // server cannot be reached; the error names the target, never the password.
  static absl::StatusOr<std::unique_ptr<Conn>> Connect(const std::string& conninfo);
  ~Conn();
  Conn(const Conn&) = delete;
  Conn& operator=(const Conn&) = delete;

  // Re-connects if the connection was lost (a server restart, a killed backend), so the
  // store recovers on its own; Unavailable naming `op` if the server is still away.
  absl::Status EnsureConnected(absl::string_view op);

  // Runs `sql` ($1, $2, … bound to `args` in order) as a named prepared statement,
  // prepared on this connection the first time the same SQL text is run.
  template <typename... Args>
  absl::StatusOr<Result> Query(absl::string_view op, const std::string& sql, const Args&... args) {
    Params params;
    (params.Add(args), ...);
    return QueryParams(op, sql, params);
  }
  absl::StatusOr<Result> QueryParams(absl::string_view op, const std::string& sql,
                                     const Params& params);
  // A script without parameters (DDL, BEGIN, SAVEPOINT …), not prepared.
  absl::Status Exec(absl::string_view op, const std::string& sql);

  // The target without credentials, for messages: "host/db" or the socket directory.
  const std::string& target() const { return target_; }
  PGconn* raw() { return conn_; }

 private:
  Conn(PGconn* conn, std::string target) : conn_(conn), target_(std::move(target)) {}

  PGconn* conn_;
  std::string target_;
  std::unordered_map<std::string, std::string> prepared_;  // SQL text → statement name
};

// A transaction on a Conn, rolled back on destruction unless committed. kRead is a
// REPEATABLE READ, READ ONLY snapshot, so a multi-query read sees one state.
class Transaction {
 public:
  enum class Mode { kRead, kWrite };
  static absl::StatusOr<Transaction> Begin(Conn& conn, Mode mode);
  Transaction(Transaction&& other) noexcept : conn_(other.conn_) { other.conn_ = nullptr; }
  Transaction& operator=(Transaction&&) = delete;
  ~Transaction();

  // COMMIT; with synchronous_commit=on (the default) it returns once the commit is
  // flushed to the server's WAL. Unavailable if the connection broke meanwhile (the
  // outcome is then unknown; the store's writes are idempotent, so resend).
  absl::Status Commit();

 private:
  explicit Transaction(Conn* conn) : conn_(conn) {}
  Conn* conn_;
};

}  // namespace blkbench::pg

#endif  // BLKBENCH_CONTROLLER_STORE_PG_CONN_H_
