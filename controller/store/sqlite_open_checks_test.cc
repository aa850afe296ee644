// The checks SqliteStore::Open makes before it writes to a file: another application's
// file (by application_id or by its tables) and a corrupt file are refused, naming the
// file, and left byte for byte as they were; a store from before application_id is adopted.
#include "controller/store/sqlite_open_checks.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "controller/store/schema.h"
#include "controller/store/sqlite_store.h"
#include "controller/store/store_test_util.h"

namespace blkbench::sqlite {
namespace {

using ::blkbench::testing::MakeExperiment;
using ::blkbench::testing::QueryText;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buf;
  buf << in.rdbuf();
  return buf.str();
}

// Runs `sql` on its own connection, as another application writing its file would.
void RawExec(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  char* err = nullptr;
  EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err), SQLITE_OK) << err;
  sqlite3_free(err);
  sqlite3_close(db);
}

class SqliteOpenChecksTest : public ::blkbench::testing::TempDirTest {
 protected:
  // Opens the store on DbPath() and expects `code` with `words` in the message, the file
  // unchanged byte for byte.
  void ExpectRefusedUntouched(absl::StatusCode code, const std::string& words,
                              const SqliteStore::Options& options = {}) {
    const std::string before = ReadFile(DbPath());
    ASSERT_FALSE(before.empty());
    absl::StatusOr<std::unique_ptr<SqliteStore>> store = SqliteStore::Open(DbPath(), options);
    ASSERT_EQ(store.status().code(), code) << store.status();
    const std::string msg(store.status().message());
    EXPECT_NE(msg.find(DbPath()), std::string::npos) << msg;
    EXPECT_NE(msg.find(words), std::string::npos) << msg;
    store = absl::UnknownError("closed");  // no connection left when the bytes are compared
    EXPECT_TRUE(ReadFile(DbPath()) == before) << "the refused file was modified";
  }
};

TEST_F(SqliteOpenChecksTest, AnotherApplicationsTablesAreRefusedUntouched) {
  RawExec(DbPath(),
          "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT);"
          "INSERT INTO notes (body) VALUES ('groceries'), ('dentist')");
  ExpectRefusedUntouched(absl::StatusCode::kFailedPrecondition,
                         "tables notes and none of blkbench's");
  EXPECT_EQ(QueryText(DbPath(), "SELECT count(*) FROM sqlite_master"), "1");
  EXPECT_EQ(QueryText(DbPath(), "PRAGMA journal_mode"), "delete");  // not switched to WAL
}

TEST_F(SqliteOpenChecksTest, AnotherApplicationIdIsRefusedUntouched) {
  RawExec(DbPath(), "PRAGMA application_id = 1179864113");  // 0x46534c31, 'FSL1'
  ExpectRefusedUntouched(absl::StatusCode::kFailedPrecondition,
                         "application_id is 0x46534c31 ('FSL1'), blkbench's is 0x626b6231 "
                         "('bkb1')");
}

TEST_F(SqliteOpenChecksTest, SomeOfBlkbenchsTablesAmongOthersAreRefused) {
  RawExec(DbPath(), "CREATE TABLE experiments (x); CREATE TABLE runs (y); CREATE TABLE z (z)");
  ExpectRefusedUntouched(absl::StatusCode::kFailedPrecondition,
                         "tables experiments, runs, z but not blkbench's cells, samples");
}

TEST_F(SqliteOpenChecksTest, AFileThatIsNotSqliteIsRefusedUntouched) {
  std::ofstream(DbPath()) << std::string(8192, 'x');
  ExpectRefusedUntouched(absl::StatusCode::kDataLoss, "not a database");
}

// A page of the experiments table overwritten with garbage: without the check the store
// opens and serves, and the damage shows on the first read of that table.
TEST_F(SqliteOpenChecksTest, ACorruptDataPageIsRefusedAtOpen) {
  {
    absl::StatusOr<std::unique_ptr<SqliteStore>> store = SqliteStore::Open(DbPath());
    ASSERT_TRUE(store.ok()) << store.status();
    for (int i = 0; i < 20; ++i) {
      ASSERT_TRUE((*store)->CreateExperiment(MakeExperiment(absl::StrCat("e", i), 4, 2)).ok());
    }
  }  // the last connection's close checkpoints the WAL into the file
  const int64_t page_size = std::stoll(QueryText(DbPath(), "PRAGMA page_size"));
  const int64_t page = std::stoll(
      QueryText(DbPath(), "SELECT rootpage FROM sqlite_master WHERE name = 'experiments'"));
  ASSERT_GT(page, 1);  // not the header page: ownership still reads fine
  {
    std::fstream f(DbPath(), std::ios::in | std::ios::out | std::ios::binary);
    f.seekp((page - 1) * page_size);
    const std::string garbage(static_cast<size_t>(page_size), '\xa5');
    f.write(garbage.data(), static_cast<std::streamsize>(garbage.size()));
    ASSERT_TRUE(f.good());
  }
  ExpectRefusedUntouched(absl::StatusCode::kDataLoss, "is corrupt (PRAGMA quick_check: ");

  SqliteStore::Options skip;
  skip.check_integrity = false;
  absl::StatusOr<std::unique_ptr<SqliteStore>> store = SqliteStore::Open(DbPath(), skip);
  ASSERT_TRUE(store.ok()) << store.status();
  EXPECT_EQ((*store)->ListExperiments(0).status().code(), absl::StatusCode::kDataLoss);
}

TEST_F(SqliteOpenChecksTest, AStoreWithoutApplicationIdIsAdopted) {
  {
    absl::StatusOr<std::unique_ptr<SqliteStore>> store = SqliteStore::Open(DbPath());
    ASSERT_TRUE(store.ok()) << store.status();
    ASSERT_TRUE((*store)->CreateExperiment(MakeExperiment("old", 1, 1)).ok());
  }
  RawExec(DbPath(), "PRAGMA application_id = 0");  // as an older blkbench left it
  absl::StatusOr<std::unique_ptr<SqliteStore>> store = SqliteStore::Open(DbPath());
  ASSERT_TRUE(store.ok()) << store.status();
  EXPECT_EQ(QueryText(DbPath(), "PRAGMA application_id"), std::to_string(kApplicationId));
  absl::StatusOr<std::vector<v1::Experiment>> listed = (*store)->ListExperiments(0);
  ASSERT_TRUE(listed.ok()) << listed.status();
  EXPECT_EQ(listed->size(), 1u);
}

TEST_F(SqliteOpenChecksTest, ANewFileGetsBlkbenchsApplicationIdAndPassesTheChecks) {
  ASSERT_TRUE(SqliteStore::Open(DbPath()).ok());
  EXPECT_EQ(QueryText(DbPath(), "PRAGMA application_id"), std::to_string(kApplicationId));
  absl::StatusOr<std::unique_ptr<Db>> db = Db::Open(DbPath());
  ASSERT_TRUE(db.ok()) << db.status();
  EXPECT_TRUE(CheckOwnership(**db).ok());
  EXPECT_TRUE(CheckIntegrity(**db).ok());
}

}  // namespace
}  // namespace blkbench::sqlite
