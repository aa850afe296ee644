// Schema migrations on real SQLite files: each migration applied once and atomically,
// databases from newer code or other applications refused with a clear error.
#include "controller/store/schema.h"

#include <gtest/gtest.h>

#include <memory>

#include "controller/store/sqlite_store.h"
#include "controller/store/store_test_util.h"

namespace blkbench::sqlite {
namespace {

using ::blkbench::testing::QueryText;

class SchemaTest : public ::blkbench::testing::TempDirTest {
 protected:
  std::unique_ptr<Db> OpenDb() {
    absl::StatusOr<std::unique_ptr<Db>> db = Db::Open(DbPath());
    EXPECT_TRUE(db.ok()) << db.status();
    return db.ok() ? *std::move(db) : nullptr;
  }
};

// Each migration creates a table: running one twice would fail with "already exists".
constexpr Migration kTestMigrations[] = {
    {1, "t1", "CREATE TABLE t1 (x INTEGER)"},
    {2, "t2", "CREATE TABLE t2 (x INTEGER)"},
    {3, "t3", "CREATE TABLE t3 (x INTEGER); INSERT INTO t1 VALUES (3)"},
};

TEST_F(SchemaTest, MigrationsApplyInOrderAndOnlyOnce) {
  std::unique_ptr<Db> db = OpenDb();
  ASSERT_NE(db, nullptr);
  ASSERT_TRUE(ApplyMigrations(*db, absl::MakeSpan(kTestMigrations, 2)).ok());
  EXPECT_EQ(*db->QueryInt("v", "PRAGMA user_version"), 2);
  EXPECT_EQ(*db->QueryInt("a", "PRAGMA application_id"), kApplicationId);

  // Same list again: nothing to do. A longer list: only the new migration runs.
  ASSERT_TRUE(ApplyMigrations(*db, absl::MakeSpan(kTestMigrations, 2)).ok());
  absl::Status s = ApplyMigrations(*db, kTestMigrations);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(*db->QueryInt("v", "PRAGMA user_version"), 3);
  EXPECT_EQ(*db->QueryInt("n", "SELECT COUNT(*) FROM t1"), 1);
}

TEST_F(SchemaTest, FailedMigrationLeavesPreviousVersionIntact) {
  std::unique_ptr<Db> db = OpenDb();
  ASSERT_NE(db, nullptr);
  const Migration broken[] = {
      kTestMigrations[0],
      {2, "half applied", "CREATE TABLE t2 (x INTEGER); INSERT INTO no_such_table VALUES (1)"},
  };
  absl::Status s = ApplyMigrations(*db, broken);
  EXPECT_EQ(s.code(), absl::StatusCode::kInternal);
  EXPECT_NE(s.message().find("schema migration 2 (half applied)"), std::string::npos) << s;
  EXPECT_NE(s.message().find("no_such_table"), std::string::npos) << s;
  EXPECT_EQ(*db->QueryInt("v", "PRAGMA user_version"), 1);
  EXPECT_EQ(*db->QueryInt("n", "SELECT COUNT(*) FROM sqlite_master WHERE name = 't2'"), 0);
}

TEST_F(SchemaTest, MisnumberedMigrationsAreAProgrammingError) {
  std::unique_ptr<Db> db = OpenDb();
  ASSERT_NE(db, nullptr);
  const Migration gap[] = {kTestMigrations[0], kTestMigrations[2]};
  EXPECT_EQ(ApplyMigrations(*db, gap).code(), absl::StatusCode::kInternal);
  EXPECT_EQ(*db->QueryInt("v", "PRAGMA user_version"), 0);
}

TEST_F(SchemaTest, StoreSetsSchemaVersionAndWal) {
  ASSERT_TRUE(SqliteStore::Open(DbPath()).ok());
  EXPECT_EQ(QueryText(DbPath(), "PRAGMA user_version"), std::to_string(StoreMigrations().size()));
  EXPECT_EQ(QueryText(DbPath(), "PRAGMA journal_mode"), "wal");  // persistent for WAL
  EXPECT_EQ(QueryText(DbPath(), "PRAGMA application_id"), std::to_string(kApplicationId));
  // Reopening does not re-run migration 1 (it would fail: tables exist).
  absl::StatusOr<std::unique_ptr<SqliteStore>> again = SqliteStore::Open(DbPath());
  EXPECT_TRUE(again.ok()) << again.status();
}

TEST_F(SchemaTest, DatabaseFromNewerCodeIsRefusedClearly) {
  {
    std::unique_ptr<Db> db = OpenDb();
    ASSERT_NE(db, nullptr);
    ASSERT_TRUE(ApplyMigrations(*db, StoreMigrations()).ok());
    ASSERT_TRUE(db->Exec("bump", "PRAGMA user_version = 99").ok());
  }
  absl::StatusOr<std::unique_ptr<SqliteStore>> store = SqliteStore::Open(DbPath());
  ASSERT_EQ(store.status().code(), absl::StatusCode::kFailedPrecondition) << store.status();
  const std::string msg(store.status().message());
  EXPECT_NE(msg.find(DbPath()), std::string::npos) << msg;
  EXPECT_NE(msg.find("schema version 99"), std::string::npos) << msg;
  EXPECT_NE(msg.find("newer"), std::string::npos) << msg;
  EXPECT_EQ(QueryText(DbPath(), "PRAGMA user_version"), "99");  // untouched
}

TEST_F(SchemaTest, ForeignDatabaseIsRefused) {
  {
    std::unique_ptr<Db> db = OpenDb();
    ASSERT_NE(db, nullptr);
    ASSERT_TRUE(db->Exec("foreign", "CREATE TABLE x (y); PRAGMA user_version = 1").ok());
  }
  absl::StatusOr<std::unique_ptr<SqliteStore>> store = SqliteStore::Open(DbPath());
  ASSERT_EQ(store.status().code(), absl::StatusCode::kFailedPrecondition) << store.status();
  EXPECT_NE(store.status().message().find("not a blkbench store"), std::string::npos);
}

}  // namespace
}  // namespace blkbench::sqlite
