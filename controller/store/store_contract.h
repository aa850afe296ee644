// The Store contract suite's fixture: each test runs against every Store implementation —
// SqliteStore on a fresh file and PgStore on a fresh database of a real PostgreSQL server
// (testing/pg_server.h) — and sees the same results.
#ifndef BLKBENCH_CONTROLLER_STORE_STORE_CONTRACT_H_
#define BLKBENCH_CONTROLLER_STORE_STORE_CONTRACT_H_

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "controller/store/pg_store.h"
#include "controller/store/sqlite_store.h"
#include "controller/store/store.h"
#include "controller/store/store_test_util.h"
#include "controller/store/testing/pg_server.h"

namespace blkbench::testing {

enum class StoreKind { kSqlite, kPostgres };

// A test with a fresh, empty store of kind GetParam() in store_.
class StoreContractTest : public TempDirTest, public ::testing::WithParamInterface<StoreKind> {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    if (GetParam() == StoreKind::kSqlite) {
      absl::StatusOr<std::unique_ptr<SqliteStore>> store = SqliteStore::Open(DbPath());
      ASSERT_TRUE(store.ok()) << store.status();
      store_ = *std::move(store);
      return;
    }
    std::string skip;
    absl::StatusOr<PgServer*> server = PgServerEnvironment::Get(&skip);
    ASSERT_TRUE(server.ok()) << server.status();
    if (*server == nullptr) GTEST_SKIP() << skip;
    pg_ = *server;
    absl::StatusOr<std::string> db = pg_->CreateDatabase();
    ASSERT_TRUE(db.ok()) << db.status();
    pg_db_ = *db;
    absl::StatusOr<std::unique_ptr<PgStore>> store = PgStore::Open(pg_->Uri(pg_db_));
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = *std::move(store);
  }

  void TearDown() override {
    store_.reset();
    if (pg_ != nullptr && !pg_db_.empty()) {
      EXPECT_TRUE(pg_->DropDatabase(pg_db_).ok());
    }
    TempDirTest::TearDown();
  }

  // One value an SQL user would see, queried on a separate connection.
  std::string Query(const std::string& sql) const {
    return GetParam() == StoreKind::kSqlite ? QueryText(DbPath(), sql)
                                            : pg_->QueryText(pg_db_, sql);
  }

  std::unique_ptr<Store> store_;
  PgServer* pg_ = nullptr;  // kPostgres only
  std::string pg_db_;
};

inline std::string StoreKindName(const ::testing::TestParamInfo<StoreKind>& info) {
  return info.param == StoreKind::kSqlite ? "Sqlite" : "Postgres";
}

}  // namespace blkbench::testing

#endif  // BLKBENCH_CONTROLLER_STORE_STORE_CONTRACT_H_
