// PgStore: SqlStore on a PostgreSQL server, for a controller whose data should live on a
// shared, backed-up database rather than a local file. Same semantics as SqliteStore;
// commits are durable with the server's default synchronous_commit=on.
#ifndef BLKBENCH_CONTROLLER_STORE_PG_STORE_H_
#define BLKBENCH_CONTROLLER_STORE_PG_STORE_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "controller/store/sql_store.h"

namespace blkbench {

// One connection (pg::PgConn), every statement prepared once per connection. Several
// controllers must not share one database. A lost connection or an unreachable server
// is Unavailable naming the operation, and the next call re-connects.
class PgStore final : public SqlStore {
 public:
  // Connects with a libpq URI or connection string (postgresql://user@host/db,
  // "host=/run/postgresql dbname=blkbench") and migrates the schema to the newest
  // version. FailedPrecondition if the database was written by a newer schema, holds
  // another application's tables or acknowledges commits before they are durable;
  // Unavailable if the server cannot be reached.
  static absl::StatusOr<std::unique_ptr<PgStore>> Open(const std::string& conninfo);

 private:
  using SqlStore::SqlStore;
};

}  // namespace blkbench

#endif  // BLKBENCH_CONTROLLER_STORE_PG_STORE_H_
