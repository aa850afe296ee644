// Schema migrations on real SQLite files: a migration run applied once and atomically,
// databases from newer code or other applications refused with a clear error, the one
// schema declaration producing the schema SQLite stores have always had, and a store
// written before the dialect seam still opening.
#include "controller/store/schema.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <memory>

#include "controller/store/sqlite_conn.h"
#include "controller/store/sqlite_open_checks.h"
#include "controller/store/sqlite_store.h"
#include "controller/store/store_test_util.h"

namespace blkbench::sql {
namespace {

using ::blkbench::sqlite::kApplicationId;
using ::blkbench::sqlite::SqliteConn;
using ::blkbench::testing::QueryText;

class SchemaTest : public ::blkbench::testing::TempDirTest {
 protected:
  std::unique_ptr<SqliteConn> OpenConn() {
    absl::StatusOr<std::unique_ptr<SqliteConn>> conn = SqliteConn::Open(DbPath(), {});
    EXPECT_TRUE(conn.ok()) << conn.status();
    return conn.ok() ? *std::move(conn) : nullptr;
  }
  static int64_t Int(SqliteConn& conn, const char* sql) { return *conn.db().QueryInt("q", sql); }
};

// Each migration creates a table: running one twice would fail with "already exists".
constexpr Migration kTestMigrations[] = {
    {1, "t1", "CREATE TABLE t1 (x {int})"},
    {2, "t2", "CREATE TABLE t2 (x {int})"},
    {3, "t3", "CREATE TABLE t3 (x {int}); INSERT INTO t1 VALUES (3)"},
};

TEST_F(SchemaTest, MigrationsApplyInOrderAndOnlyOnce) {
  std::unique_ptr<SqliteConn> conn = OpenConn();
  ASSERT_NE(conn, nullptr);
  ASSERT_TRUE(ApplyMigrations(*conn, absl::MakeSpan(kTestMigrations, 2)).ok());
  EXPECT_EQ(Int(*conn, "PRAGMA user_version"), 2);
  EXPECT_EQ(Int(*conn, "PRAGMA application_id"), kApplicationId);

  // Same list again: nothing to do. A longer list: only the new migration runs.
  ASSERT_TRUE(ApplyMigrations(*conn, absl::MakeSpan(kTestMigrations, 2)).ok());
  absl::Status s = ApplyMigrations(*conn, kTestMigrations);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(Int(*conn, "PRAGMA user_version"), 3);
  EXPECT_EQ(Int(*conn, "SELECT COUNT(*) FROM t1"), 1);
}

TEST_F(SchemaTest, AFailedMigrationRunLeavesTheDatabaseAsItWas) {
  std::unique_ptr<SqliteConn> conn = OpenConn();
  ASSERT_NE(conn, nullptr);
  const Migration broken[] = {
      kTestMigrations[0],
      {2, "half applied", "CREATE TABLE t2 (x INTEGER); INSERT INTO no_such_table VALUES (1)"},
  };
  absl::Status s = ApplyMigrations(*conn, broken);
  EXPECT_EQ(s.code(), absl::StatusCode::kInternal);
  EXPECT_NE(s.message().find("schema migration 2 (half applied)"), std::string::npos) << s;
  EXPECT_NE(s.message().find("no_such_table"), std::string::npos) << s;
  // One transaction for the run: migration 1 went with it.
  EXPECT_EQ(Int(*conn, "PRAGMA user_version"), 0);
  EXPECT_EQ(Int(*conn, "SELECT COUNT(*) FROM sqlite_master WHERE name IN ('t1', 't2')"), 0);
}

TEST_F(SchemaTest, MisnumberedMigrationsAreAProgrammingError) {
  std::unique_ptr<SqliteConn> conn = OpenConn();
  ASSERT_NE(conn, nullptr);
  const Migration gap[] = {kTestMigrations[0], kTestMigrations[2]};
  EXPECT_EQ(ApplyMigrations(*conn, gap).code(), absl::StatusCode::kInternal);
  EXPECT_EQ(Int(*conn, "PRAGMA user_version"), 0);
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
    std::unique_ptr<SqliteConn> conn = OpenConn();
    ASSERT_NE(conn, nullptr);
    ASSERT_TRUE(ApplyMigrations(*conn, StoreMigrations()).ok());
    ASSERT_TRUE(conn->Exec("bump", "PRAGMA user_version = 99").ok());
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
    std::unique_ptr<SqliteConn> conn = OpenConn();
    ASSERT_NE(conn, nullptr);
    ASSERT_TRUE(conn->Exec("foreign", "CREATE TABLE x (y); PRAGMA user_version = 1").ok());
  }
  absl::StatusOr<std::unique_ptr<SqliteStore>> store = SqliteStore::Open(DbPath());
  ASSERT_EQ(store.status().code(), absl::StatusCode::kFailedPrecondition) << store.status();
  EXPECT_NE(store.status().message().find("not a blkbench store"), std::string::npos);
}

TEST_F(SchemaTest, TypesAreTheDialectsAndOnlyPlaceholdersChange) {
  const Dialect& sqlite = SqliteConn::SqliteDialect();
  EXPECT_EQ(ForDialect(sqlite, "a {int}, b {blob}, c {bool}, d {real}){without_rowid};"),
            "a INTEGER, b BLOB, c INTEGER, d REAL) WITHOUT ROWID;");
  EXPECT_EQ(ForDialect(sqlite, "id {serial}, n {rowid}, s 'x{y}'"),
            "id INTEGER PRIMARY KEY AUTOINCREMENT, n INTEGER PRIMARY KEY, s 'x{y}'");
}

// The store_v3.sql fixture: a store as the schema before the dialect seam wrote it.
std::string OldStoreScript() { return ::blkbench::testing::TestdataFile("store_v3.sql"); }

// Every column of every table and view, as SQLite describes it.
std::string Columns(const std::string& path) {
  std::string out;
  for (const char* table : {"experiments", "cells", "runs", "samples", "histograms", "results",
                            "agents", "devices", "run_results"}) {
    out += QueryText(path, std::string("SELECT group_concat(name || ' ' || type || ' ' || "
                                       "\"notnull\" || ' ' || ifnull(dflt_value, '-') || ' ' || "
                                       "pk, ', ') FROM pragma_table_info('") +
                               table + "')") +
           "\n";
  }
  return out;
}

TEST_F(SchemaTest, TheOneDeclarationGivesSqliteTheSchemaItAlwaysHad) {
  const std::string old_path = (dir_ / "old.db").string();
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(old_path.c_str(), &raw), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(raw, OldStoreScript().c_str(), nullptr, nullptr, nullptr), SQLITE_OK)
      << sqlite3_errmsg(raw);
  // Migrations after the fixture's version 3 add what they declare, nothing else.
  ASSERT_EQ(
      sqlite3_exec(raw, "ALTER TABLE samples ADD COLUMN jobs BLOB", nullptr, nullptr, nullptr),
      SQLITE_OK)
      << sqlite3_errmsg(raw);
  sqlite3_close(raw);
  ASSERT_TRUE(SqliteStore::Open(DbPath()).ok());
  EXPECT_EQ(Columns(DbPath()), Columns(old_path));
  EXPECT_NE(Columns(DbPath()).find("id INTEGER 0 - 1"), std::string::npos) << Columns(DbPath());
}

TEST_F(SchemaTest, AStoreWrittenBeforeTheDialectSeamOpensAndServes) {
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(DbPath().c_str(), &raw), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(raw, OldStoreScript().c_str(), nullptr, nullptr, nullptr), SQLITE_OK)
      << sqlite3_errmsg(raw);
  sqlite3_close(raw);

  absl::StatusOr<std::unique_ptr<SqliteStore>> store = SqliteStore::Open(DbPath());
  ASSERT_TRUE(store.ok()) << store.status();
  ASSERT_NO_FATAL_FAILURE(::blkbench::testing::ExpectOldStoreServes(**store));
  EXPECT_EQ(QueryText(DbPath(), "SELECT MAX(id) FROM samples"), "3");
  EXPECT_EQ(QueryText(DbPath(), "PRAGMA user_version"), "4");  // migrated on
  EXPECT_EQ(QueryText(DbPath(), "PRAGMA integrity_check"), "ok");
}

}  // namespace
}  // namespace blkbench::sql
