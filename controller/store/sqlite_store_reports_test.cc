// SqliteStore::CommitReports on a full disk: a batch that cannot commit stores none of its
// reports, also through a StoreWrapper, and FaultyStore fails a batch whole. (The per-report
// behaviour every Store shares is in store_contract_reports_test.cc.)
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "controller/store/sqlite_store.h"
#include "controller/store/store_test_util.h"
#include "controller/store/store_wrapper.h"
#include "gtest/gtest.h"

namespace blkbench {
namespace {

using ::blkbench::testing::AssignRunOne;
using ::blkbench::testing::FinishReport;
using ::blkbench::testing::QueryText;
using ::blkbench::testing::SampleReport;

class SqliteStoreReportsTest : public ::blkbench::testing::TempDirTest {};

// Fills a 256 KiB store with batches of four samples through `commit` (the store itself,
// or a wrapper around it) until the disk is full; whole batches only must be stored.
template <typename Wrap>
void FillUntilFull(const std::string& path, Wrap wrap) {
  SqliteStore::Options options;
  options.max_db_bytes = 256 << 10;  // the schema takes ~80 KiB
  auto opened = SqliteStore::Open(path, options);
  ASSERT_TRUE(opened.ok()) << opened.status();
  ASSERT_NO_FATAL_FAILURE(AssignRunOne(**opened));
  Store& store = wrap(**opened);
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
  EXPECT_EQ(QueryText(path, "SELECT COUNT(*) FROM samples"), std::to_string(stored));
  EXPECT_EQ(QueryText(path, "SELECT COUNT(*) FROM histograms"), std::to_string(stored));
  EXPECT_EQ(QueryText(path, "PRAGMA integrity_check"), "ok");
}

TEST_F(SqliteStoreReportsTest, ABatchThatCannotCommitStoresNoneOfItsReports) {
  FillUntilFull(DbPath(), [](SqliteStore& s) -> Store& { return s; });
}

// Records the operations a wrapper forwarded.
class RecordingStore final : public StoreWrapper {
 public:
  using StoreWrapper::StoreWrapper;
  std::vector<std::string> ops;

 private:
  void Observe(const char* operation, double /*seconds*/, bool /*ok*/) override {
    ops.emplace_back(operation);
  }
};

// A wrapped store (InstrumentedStore, FaultyStore, any StoreWrapper) keeps the group
// commit: the batch reaches the store whole, as one transaction, so a full disk still
// leaves whole batches only (the per-report fallback would store part of one).
TEST_F(SqliteStoreReportsTest, AWrappedStoreCommitsABatchAsOneTransaction) {
  std::unique_ptr<RecordingStore> wrapper;
  FillUntilFull(DbPath(), [&](SqliteStore& s) -> Store& {
    wrapper = std::make_unique<RecordingStore>(s);
    return *wrapper;
  });
  ASSERT_FALSE(wrapper->ops.empty());
  for (const std::string& op : wrapper->ops) EXPECT_EQ(op, "commit_reports");
}

// FaultyStore fails a batch as a full disk fails its COMMIT: nothing of it is stored.
TEST_F(SqliteStoreReportsTest, FaultyStoreFailsABatchWhole) {
  auto opened = SqliteStore::Open(DbPath());
  ASSERT_TRUE(opened.ok()) << opened.status();
  ASSERT_NO_FATAL_FAILURE(AssignRunOne(**opened));
  FaultyStore faulty(**opened);
  faulty.FailWritesAfter(1);  // the first batch commits, the second fails
  const std::vector<AgentReport> first = {SampleReport(1, 1), SampleReport(1, 2)};
  ASSERT_TRUE(faulty.CommitReports(first).ok());
  const std::vector<AgentReport> second = {SampleReport(1, 3), SampleReport(1, 4), FinishReport(4)};
  EXPECT_EQ(faulty.CommitReports(second).status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(faulty.failures(), 1);
  EXPECT_EQ(QueryText(DbPath(), "SELECT COUNT(*) FROM samples"), "2");
  EXPECT_EQ(QueryText(DbPath(), "SELECT state FROM runs WHERE id = 1"), "RUN_RUNNING");
  faulty.SetFailing(false);
  ASSERT_TRUE(faulty.CommitReports(second).ok());  // the agent's retry lands whole
  EXPECT_EQ(QueryText(DbPath(), "SELECT COUNT(*) FROM samples"), "4");
  EXPECT_EQ(QueryText(DbPath(), "SELECT state FROM runs WHERE id = 1"), "RUN_DONE");
}

}  // namespace
}  // namespace blkbench
