// PgStore's schema as an ordered list of migrations, versioned in a schema_version
// table, and the code that brings a database up to date (the PostgreSQL twin of schema.h).
#ifndef BLKBENCH_CONTROLLER_STORE_PG_SCHEMA_H_
#define BLKBENCH_CONTROLLER_STORE_PG_SCHEMA_H_

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "controller/store/pg_conn.h"

namespace blkbench::pg {

// Migration N brings a database from version N-1 to N. Never edit a released migration:
// append a new one (PostgreSQL's DDL is transactional, so a migration is all or nothing).
struct Migration {
  int version;
  const char* description;
  const char* sql;  // a script without parameters, run inside the migration's transaction
};

// blkbench's PostgreSQL migrations, version 1 first.
absl::Span<const Migration> StoreMigrations();

// Applies the migrations newer than the database's schema_version in one transaction
// holding an advisory lock, so concurrent openers apply each migration once.
// `migrations` must be numbered 1, 2, ... in order. FailedPrecondition if the database's
// version is newer than the last migration, or if it has tables but no schema_version
// (another application's database).
absl::Status ApplyMigrations(Conn& conn, absl::Span<const Migration> migrations);

}  // namespace blkbench::pg

#endif  // BLKBENCH_CONTROLLER_STORE_PG_SCHEMA_H_
