// The store's schema, declared once for every dialect: an ordered list of migrations
// whose DDL names column types as {int}, {blob}, … (sql_conn.h Dialect), and the runner
// that brings a database up to date.
#ifndef BLKBENCH_CONTROLLER_STORE_SCHEMA_H_
#define BLKBENCH_CONTROLLER_STORE_SCHEMA_H_

#include <string>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "controller/store/sql_conn.h"

namespace blkbench::sql {

// Migration N brings a database from version N-1 to N. Never edit a released migration:
// append a new one (SQLite's ALTER TABLE is limited; rebuild tables with CREATE new /
// INSERT SELECT / DROP / RENAME inside the migration if needed).
struct Migration {
  int version;
  const char* description;
  const char* sql;  // a script without parameters, with the Dialect's type placeholders
};

// blkbench's migrations, version 1 first.
absl::Span<const Migration> StoreMigrations();

// The tables migration 1 creates. A SQLite file with application_id 0 that has all of
// them is a store written before blkbench set application_id (CheckOwnership adopts it);
// one that has other tables is another application's.
absl::Span<const char* const> StoreTables();

// `ddl` with the dialect's column types in place of {serial}, {rowid}, {int}, {real},
// {blob}, {bool} and {without_rowid}.
std::string ForDialect(const Dialect& dialect, absl::string_view ddl);

// Applies the migrations newer than the database's version in one write transaction
// (all or nothing) after Conn::LockSchema, so concurrent openers apply each migration
// once. `migrations` must be numbered 1, 2, ... in order (Internal otherwise).
// FailedPrecondition, nothing written, if LockSchema refuses the database or its version
// is newer than the last migration.
absl::Status ApplyMigrations(Conn& conn, absl::Span<const Migration> migrations);

}  // namespace blkbench::sql

#endif  // BLKBENCH_CONTROLLER_STORE_SCHEMA_H_
