// PgConn: the PostgreSQL side of the dialect seam (sql_conn.h) over libpq — each statement
// prepared once per connection, a lost server re-connected to, SQLSTATEs → absl::Status.
#ifndef BLKBENCH_CONTROLLER_STORE_PG_CONN_H_
#define BLKBENCH_CONTROLLER_STORE_PG_CONN_H_

#include <libpq-fe.h>

#include <memory>
#include <string>
#include <unordered_map>

#include "controller/store/sql_conn.h"

namespace blkbench::pg {

// Maps a failed libpq call to a status naming `op` and the server's message. A lost
// connection, class 08 (connection exception), 57P0x (server shutting down or starting)
// 40001/40P01 (serialization failure, deadlock) and 55P03 (lock timeout) are
// Unavailable: transient, the caller may retry. Class 53 (disk full, out of memory) is
// ResourceExhausted; 23 (constraint) and 22 (data exception) InvalidArgument; 28 and 42501
// (authentication, privilege) FailedPrecondition; XX001/XX002 (corruption) DataLoss; anything else
// Internal.
absl::Status ErrorStatus(PGconn* conn, const PGresult* result, absl::string_view op);

// ?-placeholders as PostgreSQL's: `?` → $1, $2, … in order, `?N` → $N; quoted text is
// left alone.
std::string NumberedPlaceholders(absl::string_view sql);

// One connection to a server; Several controllers must not share one database. Read
// transactions are REPEATABLE READ, READ ONLY snapshots.
class PgConn final : public sql::Conn {
 public:
  // Connects with a libpq connection string or URI (postgresql://…). Unavailable if the
  // server cannot be reached (the error names the target, never the password);
  // FailedPrecondition if the server or role acknowledges commits before the WAL is
  // flushed (synchronous_commit=off): durable commits are the store's promise.
  static absl::StatusOr<std::unique_ptr<PgConn>> Connect(const std::string& conninfo);
  ~PgConn() override;
  PgConn(const PgConn&) = delete;
  PgConn& operator=(const PgConn&) = delete;

  static const sql::Dialect& PgDialect();
  const sql::Dialect& dialect() const override { return PgDialect(); }
  const std::string& name() const override { return target_; }
  absl::StatusOr<sql::Result> Query(absl::string_view op, const std::string& sql,
                                    const sql::Params& params) override;
  absl::Status Exec(absl::string_view op, const std::string& script) override;
  absl::Status Begin(Mode mode) override;
  absl::Status Commit() override;
  void Rollback() override;
  absl::Status Savepoint(bool release_previous) override;
  absl::Status RollbackToSavepoint() override;
  // A schema_version table (created by the first migration run) under an advisory lock.
  // PostgreSQL support arrived with schema version 2, so its versions count from there:
  // its version N is schema version N + 1 (migrations 1 and 2 are its version 1).
  absl::StatusOr<int64_t> LockSchema() override;
  absl::Status RecordMigration(int version, const char* description) override;

 private:
  PgConn(PGconn* conn, std::string target) : conn_(conn), target_(std::move(target)) {}
  // Re-connects if the connection was lost (a server restart, a killed backend);
  // Unavailable naming `op` if the server is still away.
  absl::Status EnsureConnected(absl::string_view op);

  PGconn* conn_;
  std::string target_;  // "host:port/db", without credentials
  bool in_transaction_ = false;
  std::unordered_map<std::string, std::string> prepared_;  // SQL text → statement name
};

}  // namespace blkbench::pg

#endif  // BLKBENCH_CONTROLLER_STORE_PG_CONN_H_
