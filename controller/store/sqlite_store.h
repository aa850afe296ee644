// SqliteStore: the embedded default Store — SqlStore on one SQLite file in WAL mode with
// durable (synchronous=FULL) commits, so whatever a method has returned OK for survives
// a crash.
#ifndef BLKBENCH_CONTROLLER_STORE_SQLITE_STORE_H_
#define BLKBENCH_CONTROLLER_STORE_SQLITE_STORE_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "controller/store/sql_store.h"
#include "controller/store/sqlite_conn.h"

namespace blkbench {

// Several processes may open the same file (SQLite's locking plus busy_timeout); writers
// then take turns. A full disk (or max_db_bytes reached) is ResourceExhausted, a busy
// database past busy_timeout Unavailable.
class SqliteStore final : public SqlStore {
 public:
  using Options = sqlite::ConnOptions;

  // Opens or creates the store at `path` (sqlite::SqliteConn::Open: its checks before
  // anything is written) and migrates its schema to the newest version (FailedPrecondition
  // if it was written by a newer one).
  static absl::StatusOr<std::unique_ptr<SqliteStore>> Open(const std::string& path,
                                                           const Options& options = {});

 private:
  using SqlStore::SqlStore;
};

}  // namespace blkbench

#endif  // BLKBENCH_CONTROLLER_STORE_SQLITE_STORE_H_
