// OpenStore: picks the Store implementation from the controller's --db value.
#ifndef BLKBENCH_CONTROLLER_STORE_STORE_FACTORY_H_
#define BLKBENCH_CONTROLLER_STORE_STORE_FACTORY_H_

#include <cstddef>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "controller/store/store.h"

namespace blkbench {

struct OpenStoreOptions {
  // SQLite: PRAGMA quick_check at open (SqliteStore::Options::check_integrity). PostgreSQL
  // checks its own pages (data_checksums) as it reads them; nothing to do there.
  bool check_integrity = true;
};

// `postgresql://…` or `postgres://…` (a libpq URI) → PgStore; `sqlite:PATH` or a plain
// path → SqliteStore on that file. InvalidArgument for an empty value; otherwise the
// opened store's own errors.
absl::StatusOr<std::unique_ptr<Store>> OpenStore(const std::string& db);
absl::StatusOr<std::unique_ptr<Store>> OpenStore(const std::string& db,
                                                 const OpenStoreOptions& options);

// What MigrateStore copied.
struct MigrateSummary {
  size_t experiments = 0;
  size_t runs = 0;
  size_t samples = 0;
  size_t results = 0;
  size_t agents = 0;
};

// Copies everything in the store `from` (any OpenStore value) into the PostgreSQL
// database `to`, which must be empty (FailedPrecondition otherwise, nothing written), in
// one PostgreSQL transaction (PgStore::Import). InvalidArgument unless `to` is a
// postgresql:// URI. Stop the controller using `from` first.
absl::StatusOr<MigrateSummary> MigrateStore(const std::string& from, const std::string& to);

// True if `db` names a PostgreSQL database (the scheme OpenStore maps to PgStore).
bool IsPostgresUri(const std::string& db);

// `db` for logs: a postgresql:// URI with its password replaced by "***".
std::string RedactedStoreName(const std::string& db);

}  // namespace blkbench

#endif  // BLKBENCH_CONTROLLER_STORE_STORE_FACTORY_H_
