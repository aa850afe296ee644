// Ownership and integrity checks of an SQLite store file at open (see
// sqlite_open_checks.h).
#include "controller/store/sqlite_open_checks.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "controller/store/schema.h"

namespace blkbench::sqlite {
namespace {

// At most this many names of a foreign file's tables, and of quick_check's problems, go
// into an error: enough to recognise the file or the damage, short enough for a log line.
constexpr size_t kMaxListed = 5;

// "0x626b6231 ('bkb1')": application ids are usually four ASCII letters (sqlite.org's
// magic.txt lists registered ones), so both forms help identify the owner.
std::string DescribeApplicationId(int64_t id) {
  const auto bits = static_cast<uint32_t>(id);
  std::string text;
  for (int shift = 24; shift >= 0; shift -= 8) {
    const char c = static_cast<char>((bits >> shift) & 0xff);
    if (c < 0x20 || c > 0x7e) return absl::StrCat("0x", absl::Hex(bits, absl::kZeroPad8));
    text.push_back(c);
  }
  return absl::StrCat("0x", absl::Hex(bits, absl::kZeroPad8), " ('", text, "')");
}

// "a, b, c and 4 more", each name escaped: they come from a file we did not write and
// end up in logs and terminals.
std::string ListNames(const std::vector<std::string>& names) {
  std::vector<std::string> shown;
  for (size_t i = 0; i < names.size() && i < kMaxListed; ++i) {
    shown.push_back(absl::CHexEscape(names[i]));
  }
  std::string out = absl::StrJoin(shown, ", ");
  if (names.size() > kMaxListed) absl::StrAppend(&out, " and ", names.size() - kMaxListed, " more");
  return out;
}

}  // namespace

absl::Status CheckOwnership(Db& db) {
  const std::string& path = db.path();
  absl::StatusOr<int64_t> app_id =
      db.QueryInt(absl::StrCat("read application_id of ", path), "PRAGMA application_id");
  if (!app_id.ok()) return app_id.status();
  if (*app_id == kApplicationId) return absl::OkStatus();
  const std::string refused = absl::StrCat("database ", path, " is not a blkbench store: ");
  if (*app_id != 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        refused, "its application_id is ", DescribeApplicationId(*app_id), ", blkbench's is ",
        DescribeApplicationId(kApplicationId), "; it was left untouched (give --db another file)"));
  }
  absl::StatusOr<int64_t> version =
      db.QueryInt(absl::StrCat("read user_version of ", path), "PRAGMA user_version");
  if (!version.ok()) return version.status();
  absl::StatusOr<Statement> select =
      db.Prepare(absl::StrCat("list the tables of ", path),
                 "SELECT name FROM sqlite_master WHERE name NOT LIKE 'sqlite\\_%' ESCAPE '\\' "
                 "ORDER BY name");
  if (!select.ok()) return select.status();
  absl::StatusOr<std::vector<std::string>> names = select->Collect<std::string>(
      [](Statement& row) -> absl::StatusOr<std::string> { return row.Text(0); });
  if (!names.ok()) return names.status();
  if (names->empty()) {
    if (*version == 0) return absl::OkStatus();  // new (or emptied): blkbench creates it
    return absl::FailedPreconditionError(
        absl::StrCat(refused, "it has no tables but user_version ", *version,
                     " (application_id 0); it was left untouched (give --db another file)"));
  }
  std::vector<std::string> missing;
  for (const char* table : sql::StoreTables()) {
    if (std::find(names->begin(), names->end(), table) == names->end()) missing.emplace_back(table);
  }
  // Every table of blkbench's first schema: a store written before application_id was
  // set. ApplyMigrations sets the id.
  if (missing.empty()) return absl::OkStatus();
  const bool none = missing.size() == sql::StoreTables().size();
  return absl::FailedPreconditionError(absl::StrCat(
      refused, "application_id 0, user_version ", *version, ", tables ", ListNames(*names),
      none ? " and none of blkbench's" : absl::StrCat(" but not blkbench's ", ListNames(missing)),
      "; blkbench does not add its tables to another application's file, which was left "
      "untouched (give --db another file)"));
}

absl::Status CheckIntegrity(Db& db) {
  const std::string& path = db.path();
  // Damage quick_check cannot step over (a garbled b-tree page) ends it with
  // SQLITE_CORRUPT instead of a row: that is a finding too, under this op name.
  absl::StatusOr<std::vector<std::string>> problems = [&]() {
    absl::StatusOr<Statement> check =
        db.Prepare("it stopped", absl::StrCat("PRAGMA quick_check(", kMaxListed, ")"));
    if (!check.ok()) return absl::StatusOr<std::vector<std::string>>(check.status());
    return check->Collect<std::string>(
        [](Statement& row) -> absl::StatusOr<std::string> { return row.Text(0); });
  }();
  if (!problems.ok() && problems.status().code() == absl::StatusCode::kDataLoss) {
    problems = std::vector<std::string>{std::string(problems.status().message())};
  }
  if (!problems.ok()) {
    return absl::Status(problems.status().code(), absl::StrCat("PRAGMA quick_check of ", path, ": ",
                                                               problems.status().message()));
  }
  if (problems->size() == 1 && (*problems)[0] == "ok") return absl::OkStatus();
  return absl::DataLossError(absl::StrCat(
      "database ", path, " is corrupt (PRAGMA quick_check: ", absl::StrJoin(*problems, "; "),
      "); refusing to serve from it: restore a backup, or salvage what is readable with "
      "`sqlite3 ",
      path, " .recover` (docs/reliability.md \"Store checks at open\")"));
}

}  // namespace blkbench::sqlite
