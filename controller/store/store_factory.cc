// OpenStore (see store_factory.h).
#include "controller/store/store_factory.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "controller/store/pg_store.h"
#include "controller/store/sqlite_store.h"
#include "controller/store/store_copy.h"

namespace blkbench {

bool IsPostgresUri(const std::string& db) {
  return absl::StartsWith(db, "postgresql://") || absl::StartsWith(db, "postgres://");
}

absl::StatusOr<std::unique_ptr<Store>> OpenStore(const std::string& db) {
  return OpenStore(db, OpenStoreOptions());
}

absl::StatusOr<std::unique_ptr<Store>> OpenStore(const std::string& db,
                                                 const OpenStoreOptions& options) {
  if (db.empty()) return absl::InvalidArgumentError("no store given (--db)");
  if (IsPostgresUri(db)) {
    absl::StatusOr<std::unique_ptr<PgStore>> store = PgStore::Open(db);
    if (!store.ok()) return store.status();
    return std::unique_ptr<Store>(*std::move(store));
  }
  absl::string_view path = db;
  absl::ConsumePrefix(&path, "sqlite:");
  if (path.empty()) return absl::InvalidArgumentError("sqlite: needs a file path");
  SqliteStore::Options sqlite_options;
  sqlite_options.check_integrity = options.check_integrity;
  absl::StatusOr<std::unique_ptr<SqliteStore>> store =
      SqliteStore::Open(std::string(path), sqlite_options);
  if (!store.ok()) return store.status();
  return std::unique_ptr<Store>(*std::move(store));
}

std::string RedactedStoreName(const std::string& db) {
  if (!IsPostgresUri(db)) return db;
  std::string out = db;
  // scheme://user:password@host/… — the password ends at the authority's '@'.
  const size_t start = out.find("://") + 3;
  const size_t at = out.find('@', start);
  const size_t colon = out.find(':', start);
  if (at != std::string::npos && at < out.find('/', start) && colon < at) {
    out = absl::StrCat(out.substr(0, colon + 1), "***", out.substr(at));
  }
  // …?password=secret&…
  if (size_t p = out.find("password="); p != std::string::npos) {
    const size_t value = p + 9;
    const size_t end = out.find('&', value);
    out =
        absl::StrCat(out.substr(0, value), "***", end == std::string::npos ? "" : out.substr(end));
  }
  return out;
}

absl::StatusOr<MigrateSummary> MigrateStore(const std::string& from, const std::string& to) {
  if (!IsPostgresUri(to)) {
    return absl::InvalidArgumentError(
        absl::StrCat("migrate: --to must be a postgresql:// URI, not '", to, "'"));
  }
  absl::StatusOr<std::unique_ptr<Store>> source = OpenStore(from);
  if (!source.ok()) return source.status();
  absl::StatusOr<StoreContents> contents = ReadContents(**source);
  if (!contents.ok()) return contents.status();
  absl::StatusOr<std::unique_ptr<PgStore>> target = PgStore::Open(to);
  if (!target.ok()) return target.status();
  if (absl::Status s = (*target)->Import(*contents); !s.ok()) return s;
  MigrateSummary summary;
  summary.experiments = contents->experiments.size();
  for (const v1::Experiment& e : contents->experiments) {
    summary.runs += static_cast<size_t>(e.runs_size());
    for (const v1::Run& run : e.runs()) summary.results += run.has_result() ? 1 : 0;
  }
  for (const auto& [run, samples] : contents->samples) summary.samples += samples.size();
  summary.agents = contents->agents.size();
  return summary;
}

}  // namespace blkbench
