// The SQLite store's schema as an ordered list of migrations, versioned with
// PRAGMA user_version, and the code that brings a database up to date.
#ifndef BLKBENCH_CONTROLLER_STORE_SCHEMA_H_
#define BLKBENCH_CONTROLLER_STORE_SCHEMA_H_

#include <cstdint>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "controller/store/sqlite_db.h"

namespace blkbench::sqlite {

// Migration N brings a database from user_version N-1 to N. Never edit a released
// migration: append a new one (SQLite's ALTER TABLE is limited; rebuild tables with
// CREATE new / INSERT SELECT / DROP / RENAME inside the migration if needed).
struct Migration {
  int version;
  const char* description;
  const char* sql;  // a script without parameters, run inside the migration's transaction
};

// PRAGMA application_id of blkbench databases ("bkb1"), so foreign files are refused.
inline constexpr int32_t kApplicationId = 0x626b6231;

// blkbench's migrations, version 1 first.
absl::Span<const Migration> StoreMigrations();

// The tables migration 1 creates. A file with application_id 0 that has all of them is a
// store written before blkbench set application_id (CheckOwnership adopts it); one that
// has other tables is another application's.
absl::Span<const char* const> StoreTables();

// Applies the migrations newer than the database's user_version, each in its own
// IMMEDIATE transaction that also sets user_version and application_id (so concurrent
// openers apply each migration once); a store already up to date that lacks the
// application_id gets it in a transaction of its own. `migrations` must be numbered
// 1, 2, ... in order. FailedPrecondition, nothing written, if CheckOwnership refuses the
// file or its version is newer than the last migration.
absl::Status ApplyMigrations(Db& db, absl::Span<const Migration> migrations);

}  // namespace blkbench::sqlite

#endif  // BLKBENCH_CONTROLLER_STORE_SCHEMA_H_
