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

using ::blkbench::testing::MakeExperiment;
using ::blkbench::testing::MakeSample;
using ::blkbench::testing::QueryText;

class SqliteStoreReportsTest : public ::blkbench::testing::TempDirTest {
 protected:
  // Run 1 of a new experiment, assigned: attempt 1 under lease "L1".
  void AssignRunOne(SqliteStore& store) {
    ASSERT_TRUE(store.CreateExperiment(MakeExperiment("e", 1, 1)).ok());
    absl::StatusOr<v1::Run> run = store.GetRun(1);
    ASSERT_TRUE(run.ok()) << run.status();
    run->set_state(v1::RUN_ASSIGNED);
    run->set_attempt(1);
    run->set_agent_id("a1");
    run->set_device_path("/dev/x");
    run->set_lease_id("L1");
    ASSERT_TRUE(store.UpdateRun(*run).ok());
  }
  static AgentReport Sample(uint64_t run_id, uint64_t seq, const std::string& lease = "L1") {
    AgentReport r;
    r.run_id = run_id;
    r.attempt = 1;
    r.lease_id = lease;
    r.sample = MakeSample(seq);
    return r;
  }
  static AgentReport Finish(uint64_t samples_through) {
    AgentReport r;
    r.kind = AgentReport::Kind::kFinish;
    r.run_id = 1;
    r.attempt = 1;
    r.lease_id = "L1";
    r.state = v1::RUN_DONE;
    r.finished_unix_ms = 1700000001000;
    r.has_result = true;
    r.result.set_iops(1234);
    r.samples_through = samples_through;
    return r;
  }
};

TEST_F(SqliteStoreReportsTest, ABatchThatCannotCommitStoresNoneOfItsReports) {
  SqliteStore::Options options;
  options.max_db_bytes = 256 << 10;  // the schema takes ~80 KiB
  auto opened = SqliteStore::Open(DbPath(), options);
  ASSERT_TRUE(opened.ok()) << opened.status();
  SqliteStore& store = **opened;
  AssignRunOne(store);
  // Batches of samples with large histograms until the disk is full.
  uint64_t stored = 0;
  absl::Status status;
  for (uint64_t seq = 1; seq < 1000 && status.ok(); seq += 4) {
    std::vector<AgentReport> batch;
    for (uint64_t k = seq; k < seq + 4; ++k) {
      batch.push_back(Sample(1, k));
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
