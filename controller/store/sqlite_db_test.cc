// The statement cache of sqlite::Db: a text is parsed once, a reused statement starts
// with no bindings and no cursor, and a nested use of the same text gets its own; and
// SqliteConn's transactions over it.
#include "controller/store/sqlite_db.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>

#include "controller/store/sqlite_conn.h"

namespace blkbench::sqlite {
namespace {

// The statements SQLite itself holds open on the connection.
int OpenStatements(sqlite3* db) {
  int n = 0;
  for (sqlite3_stmt* s = sqlite3_next_stmt(db, nullptr); s != nullptr;
       s = sqlite3_next_stmt(db, s)) {
    ++n;
  }
  return n;
}

class SqliteDbTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = (std::filesystem::path(::testing::TempDir()) /
             (std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) + ".db"))
                .string();
    std::filesystem::remove(path_);
    auto db = Db::Open(path_);
    ASSERT_TRUE(db.ok()) << db.status();
    db_ = *std::move(db);
    ASSERT_TRUE(db_->Exec("schema", "CREATE TABLE t (a INTEGER, b INTEGER)").ok());
  }
  void TearDown() override {
    db_.reset();
    std::filesystem::remove(path_);
  }
  std::string path_;
  std::unique_ptr<Db> db_;
};

TEST_F(SqliteDbTest, SameTextIsPreparedOnce) {
  for (int i = 0; i < 100; ++i) {
    ASSERT_TRUE(db_->Execute("insert", "INSERT INTO t (a, b) VALUES (?1, ?2)", i, i * 2).ok());
  }
  EXPECT_EQ(db_->CachedStatements(), 1u);
  EXPECT_EQ(OpenStatements(db_->raw()), 1);
  auto count = db_->QueryInt("count", "SELECT count(*) FROM t");
  ASSERT_TRUE(count.ok()) << count.status();
  EXPECT_EQ(*count, 100);
}

TEST_F(SqliteDbTest, ReusedStatementStartsWithoutBindingsOrCursor) {
  ASSERT_TRUE(db_->Execute("insert", "INSERT INTO t (a, b) VALUES (?1, ?2)", 1, 2).ok());
  ASSERT_TRUE(db_->Execute("insert", "INSERT INTO t (a, b) VALUES (?1, ?2)", 3, 4).ok());
  {
    // Binds only ?1: the previous use's ?2 must not leak into this row.
    auto stmt = db_->Prepare("insert", "INSERT INTO t (a, b) VALUES (?1, ?2)");
    ASSERT_TRUE(stmt.ok()) << stmt.status();
    ASSERT_TRUE(stmt->BindInt(5).Run().ok());
  }
  auto nulls = db_->QueryInt("nulls", "SELECT count(*) FROM t WHERE a = 5 AND b IS NULL");
  ASSERT_TRUE(nulls.ok()) << nulls.status();
  EXPECT_EQ(*nulls, 1);
  {
    // Left after its first row: the next use must start from the first row again.
    auto scan = db_->Prepare("scan", "SELECT a FROM t ORDER BY a");
    ASSERT_TRUE(scan.ok());
    ASSERT_TRUE(*scan->Step());
    EXPECT_EQ(scan->Int(0), 1);
  }
  auto scan = db_->Prepare("scan", "SELECT a FROM t ORDER BY a");
  ASSERT_TRUE(scan.ok());
  ASSERT_TRUE(*scan->Step());
  EXPECT_EQ(scan->Int(0), 1);
}

TEST_F(SqliteDbTest, NestedUseOfOneTextGetsItsOwnStatement) {
  for (int i = 1; i <= 3; ++i) {
    ASSERT_TRUE(db_->Execute("insert", "INSERT INTO t (a, b) VALUES (?1, ?2)", i, i).ok());
  }
  const char* kScan = "SELECT a FROM t WHERE a >= ?1 ORDER BY a";
  auto outer = db_->Prepare("outer", kScan);
  ASSERT_TRUE(outer.ok());
  outer->BindInt(1);
  int pairs = 0;
  ASSERT_TRUE(outer
                  ->ForEachRow([&](Statement& row) -> absl::Status {
                    auto inner = db_->Prepare("inner", kScan);
                    if (!inner.ok()) return inner.status();
                    inner->BindInt(row.Int(0));
                    return inner->ForEachRow([&](Statement&) {
                      ++pairs;
                      return absl::OkStatus();
                    });
                  })
                  .ok());
  EXPECT_EQ(pairs, 3 + 2 + 1);
  EXPECT_EQ(db_->CachedStatements(), 2u);  // the insert and the outer scan
}

TEST_F(SqliteDbTest, TransactionsOfAConnCommitAndRollBack) {
  const std::string path = path_ + ".conn";
  std::filesystem::remove(path);
  auto conn = SqliteConn::Open(path, {});
  ASSERT_TRUE(conn.ok()) << conn.status();
  ASSERT_TRUE((*conn)->Exec("schema", "CREATE TABLE t (a INTEGER, b INTEGER)").ok());
  {
    auto tx = sql::Transaction::Begin(**conn, sql::Conn::Mode::kWrite);
    ASSERT_TRUE(tx.ok()) << tx.status();
    ASSERT_TRUE((*conn)->Run("insert", "INSERT INTO t (a, b) VALUES (?1, ?2)", 7, 7).ok());
    ASSERT_TRUE(tx->Commit().ok());
  }
  {
    auto tx = sql::Transaction::Begin(**conn, sql::Conn::Mode::kWrite);
    ASSERT_TRUE(tx.ok()) << tx.status();
    ASSERT_TRUE((*conn)->Run("insert", "INSERT INTO t (a, b) VALUES (?1, ?2)", 8, 8).ok());
  }  // rolled back
  EXPECT_FALSE((*conn)->db().InTransaction());
  auto count = (*conn)->Run("count", "SELECT count(*) FROM t");
  ASSERT_TRUE(count.ok());
  EXPECT_EQ(count->Int(0, 0), 1);
  conn->reset();
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace blkbench::sqlite
