// SqliteConn: the SQLite side of the dialect seam (sql_conn.h) — one file in WAL mode with
// durable (synchronous=FULL) commits, checked before anything is written to it.
#ifndef BLKBENCH_CONTROLLER_STORE_SQLITE_CONN_H_
#define BLKBENCH_CONTROLLER_STORE_SQLITE_CONN_H_

#include <cstdint>
#include <memory>
#include <string>

#include "controller/store/sql_conn.h"
#include "controller/store/sqlite_db.h"

namespace blkbench::sqlite {

struct ConnOptions {
  // How long a statement waits for another process's lock before Unavailable.
  int busy_timeout_ms = 5000;
  // Upper bound on the database size (rounded down to whole pages); 0 = no bound.
  // Lets operators cap disk use, and tests simulate a full disk.
  int64_t max_db_bytes = 0;
  // Run PRAGMA quick_check at open (CheckIntegrity). It reads the whole file: seconds
  // per GB from the page cache, the disk's read speed cold (docs/reliability.md "Store
  // checks at open"); false skips it for very large stores (--skip_db_check).
  bool check_integrity = true;
};

// Several processes may open the same file (SQLite's locking plus busy_timeout); writers
// then take turns. BEGIN IMMEDIATE takes the write lock up front, so a write transaction
// never fails BUSY half way.
class SqliteConn final : public sql::Conn {
 public:
  // Opens (creating if missing) the file at `path`. Before anything is written to an
  // existing file: FailedPrecondition if it is not a blkbench store (CheckOwnership),
  // DataLoss if quick_check finds it corrupt (CheckIntegrity); the error names the
  // file, which is left untouched. Then WAL, synchronous=FULL, foreign keys and the size
  // cap are set (per connection).
  static absl::StatusOr<std::unique_ptr<SqliteConn>> Open(const std::string& path,
                                                          const ConnOptions& options);

  static const sql::Dialect& SqliteDialect();
  const sql::Dialect& dialect() const override { return SqliteDialect(); }
  const std::string& name() const override { return db_->path(); }
  absl::StatusOr<sql::Result> Query(absl::string_view op, const std::string& sql,
                                    const sql::Params& params) override;
  absl::Status Exec(absl::string_view op, const std::string& script) override;
  absl::Status Begin(Mode mode) override;
  // SQLite rolls a transaction back by itself after some errors (SQLITE_FULL, IOERR,
  // NOMEM); Commit then reports it and Rollback has nothing left to undo.
  absl::Status Commit() override;
  void Rollback() override;
  absl::Status Savepoint(bool release_previous) override;
  absl::Status RollbackToSavepoint() override;
  // PRAGMA user_version, and application_id (kApplicationId) set on the way.
  absl::StatusOr<int64_t> LockSchema() override;
  absl::Status RecordMigration(int version, const char* description) override;

  Db& db() { return *db_; }

 private:
  explicit SqliteConn(std::unique_ptr<Db> db) : db_(std::move(db)) {}
  std::unique_ptr<Db> db_;
};

}  // namespace blkbench::sqlite

#endif  // BLKBENCH_CONTROLLER_STORE_SQLITE_CONN_H_
