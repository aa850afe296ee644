// SqliteStore::CommitReports on a full disk: a batch that cannot commit stores none of its
// reports. (The per-report behaviour every Store shares is in store_contract_reports_test.cc.)
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "controller/store/sqlite_store.h"
#include "controller/store/store_test_util.h"
#include "gtest/gtest.h"

namespace blkbench {
namespace {

using ::blkbench::testing::AssignRunOne;
using ::blkbench::testing::FinishReport;
using ::blkbench::testing::QueryText;
using ::blkbench::testing::SampleReport;

class SqliteStoreReportsTest : public ::blkbench::testing::TempDirTest {};

TEST_F(SqliteStoreReportsTest, ABatchThatCannotCommitStoresNoneOfItsReports) {
  SqliteStore::Options options;
  options.max_db_bytes = 256 << 10;  // the schema takes ~80 KiB
  auto opened = SqliteStore::Open(DbPath(), options);
  ASSERT_TRUE(opened.ok()) << opened.status();
  SqliteStore& store = **opened;
  ASSERT_NO_FATAL_FAILURE(AssignRunOne(store));
  // Batches of samples with large histograms until the disk is full.
  uint64_t stored = 0;
  absl::Status status;
  for (uint64_t seq = 1; seq < 1000 && status.ok(); seq += 4) {
    std::vector<AgentReport> batch;
    for (uint64_t k = seq; k < seq + 4; ++k) {
      batch.push_back(SampleReport(1, k));
      *batch.back().sample.mutable_lat() = ::blkbench::testing::MakeHistogram(k, 1500);
    }
    absl::StatusOr<std::vector<absl::Status>> got = store.CommitReports(batch);
    status = got.status();
    if (got.ok()) {
      for (const absl::Status& s : *got) EXPECT_TRUE(s.ok()) << s;
      stored += batch.size();
    }
  }
  ASSERT_EQ(status.code(), absl::StatusCode::kResourceExhausted) << status;
  ASSERT_GT(stored, 0u);
  // Whole batches only: not one report of the failed batch is there.
  EXPECT_EQ(QueryText(DbPath(), "SELECT COUNT(*) FROM samples"), std::to_string(stored));
  EXPECT_EQ(QueryText(DbPath(), "SELECT COUNT(*) FROM histograms"), std::to_string(stored));
  EXPECT_EQ(QueryText(DbPath(), "PRAGMA integrity_check"), "ok");
}

}  // namespace
}  // namespace blkbench
