// Checks on an SQLite file before the store writes anything to it: whose file it is
// (application_id and tables) and whether its pages are sound (PRAGMA quick_check). Both
// only read, so a refused file is left byte for byte as it was.
#ifndef BLKBENCH_CONTROLLER_STORE_SQLITE_OPEN_CHECKS_H_
#define BLKBENCH_CONTROLLER_STORE_SQLITE_OPEN_CHECKS_H_

#include <cstdint>

#include "absl/status/status.h"
#include "controller/store/sqlite_db.h"

namespace blkbench::sqlite {

// PRAGMA application_id of blkbench databases ("bkb1"), so foreign files are refused.
inline constexpr int32_t kApplicationId = 0x626b6231;

// OK for a file blkbench may use: one with blkbench's application_id (kApplicationId), an
// empty one (application_id 0, no tables, user_version 0: new), or a store from before
// the id was set (application_id 0 and every table of sql::StoreTables(); ApplyMigrations then
// sets the id). FailedPrecondition naming the file and what was found for anything else:
// another application_id, or tables that are not blkbench's. Reads only.
absl::Status CheckOwnership(Db& db);

// Runs PRAGMA quick_check, which reads every page of the file (O(file size); see
// docs/reliability.md for timings) and checks each b-tree page's structure, without
// checking that indexes match their tables (that is integrity_check, several times
// slower). OK when it reports "ok"; DataLoss naming the file and the first problems
// otherwise, so a corrupt store is refused at open instead of failing on a later read.
absl::Status CheckIntegrity(Db& db);

}  // namespace blkbench::sqlite

#endif  // BLKBENCH_CONTROLLER_STORE_SQLITE_OPEN_CHECKS_H_
