// SqliteStore::Open and PgStore::Open: a connection of each dialect, brought to the
// newest schema, under the one SqlStore.
#include "controller/store/pg_conn.h"
#include "controller/store/pg_store.h"
#include "controller/store/schema.h"
#include "controller/store/sqlite_store.h"

namespace blkbench {

absl::StatusOr<std::unique_ptr<SqliteStore>> SqliteStore::Open(const std::string& path,
                                                               const Options& options) {
  absl::StatusOr<std::unique_ptr<sqlite::SqliteConn>> conn =
      sqlite::SqliteConn::Open(path, options);
  if (!conn.ok()) return conn.status();
  if (absl::Status s = sql::ApplyMigrations(**conn, sql::StoreMigrations()); !s.ok()) return s;
  return std::unique_ptr<SqliteStore>(new SqliteStore(*std::move(conn)));
}

absl::StatusOr<std::unique_ptr<PgStore>> PgStore::Open(const std::string& conninfo) {
  absl::StatusOr<std::unique_ptr<pg::PgConn>> conn = pg::PgConn::Connect(conninfo);
  if (!conn.ok()) return conn.status();
  if (absl::Status s = sql::ApplyMigrations(**conn, sql::StoreMigrations()); !s.ok()) return s;
  return std::unique_ptr<PgStore>(new PgStore(*std::move(conn)));
}

}  // namespace blkbench
