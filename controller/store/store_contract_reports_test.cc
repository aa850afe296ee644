// Store::CommitReports and UpdateRuns on every implementation: one transaction per batch;
// a report refused for its content (stale lease, unknown run, a result ahead of its
// samples) rolls back alone; a placement pass is written all or none.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "controller/store/store_contract.h"
#include "gtest/gtest.h"

namespace blkbench {
namespace {

using ::blkbench::testing::MakeExperiment;
using ::blkbench::testing::MakeSample;
using ::blkbench::testing::StoreKind;

class ReportsTest : public ::blkbench::testing::StoreContractTest {
 protected:
  // Run 1 of a new experiment, assigned: attempt 1 under lease "L1".
  void AssignRunOne(Store& store) {
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

TEST_P(ReportsTest, RefusedReportsRollBackAloneAndTheRestCommits) {
  Store& store = *store_;
  AssignRunOne(store);
  const std::vector<AgentReport> batch = {
      Sample(1, 1),        // stored; the run becomes RUNNING
      Sample(1, 5, "L0"),  // a stale lease: refused
      Sample(9, 1),        // no such run
      Finish(2),           // sample 2 is not stored yet: refused, the run stays RUNNING
      Sample(1, 2),        // stored
      Sample(1, 1),        // a duplicate: OK, changes nothing
      Finish(2),           // now complete: DONE with its result
  };
  absl::StatusOr<std::vector<absl::Status>> got = store.CommitReports(batch);
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ(got->size(), batch.size());
  EXPECT_TRUE((*got)[0].ok()) << (*got)[0];
  EXPECT_EQ((*got)[1].code(), absl::StatusCode::kFailedPrecondition) << (*got)[1];
  EXPECT_EQ((*got)[2].code(), absl::StatusCode::kNotFound) << (*got)[2];
  EXPECT_EQ((*got)[3].code(), absl::StatusCode::kFailedPrecondition) << (*got)[3];
  EXPECT_NE((*got)[3].message().find("samples 2..2"), std::string::npos) << (*got)[3];
  EXPECT_TRUE((*got)[4].ok()) << (*got)[4];
  EXPECT_TRUE((*got)[5].ok()) << (*got)[5];
  EXPECT_TRUE((*got)[6].ok()) << (*got)[6];
  absl::StatusOr<v1::Run> run = store.GetRun(1);
  ASSERT_TRUE(run.ok());
  EXPECT_EQ(run->state(), v1::RUN_DONE);
  EXPECT_EQ(run->samples(), 2u);
  EXPECT_EQ(run->result().iops(), 1234);
  EXPECT_EQ(Query("SELECT COUNT(*) FROM samples"), "2");
}

TEST_P(ReportsTest, UpdateRunsWritesAPlacementPassAllOrNone) {
  Store& store = *store_;
  ASSERT_TRUE(store.CreateExperiment(MakeExperiment("e", 2, 1)).ok());  // runs 1 and 2
  std::vector<v1::Run> runs;
  for (uint64_t id : {1, 2}) {
    absl::StatusOr<v1::Run> run = store.GetRun(id);
    ASSERT_TRUE(run.ok()) << run.status();
    run->set_state(v1::RUN_ASSIGNED);
    run->set_attempt(1);
    run->set_lease_id(absl::StrCat("L", id));
    runs.push_back(*run);
  }
  v1::Run unknown = runs[1];
  unknown.set_id(99);
  RunsWritten w = store.UpdateRuns({runs[0], unknown});
  EXPECT_EQ(w.count, 0u);
  EXPECT_EQ(w.status.code(), absl::StatusCode::kNotFound) << w.status;
  absl::StatusOr<v1::Run> first = store.GetRun(1);
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(first->state(), v1::RUN_QUEUED) << "rolled back with the failed run";

  w = store.UpdateRuns(runs);
  EXPECT_EQ(w.count, 2u);
  EXPECT_TRUE(w.status.ok()) << w.status;
  for (uint64_t id : {1, 2}) {
    absl::StatusOr<v1::Run> run = store.GetRun(id);
    ASSERT_TRUE(run.ok());
    EXPECT_EQ(run->state(), v1::RUN_ASSIGNED);
    EXPECT_EQ(run->lease_id(), absl::StrCat("L", id));
  }
}

INSTANTIATE_TEST_SUITE_P(Sqlite, ReportsTest, ::testing::Values(StoreKind::kSqlite),
                         ::blkbench::testing::StoreKindName);
INSTANTIATE_TEST_SUITE_P(Postgres, ReportsTest, ::testing::Values(StoreKind::kPostgres),
                         ::blkbench::testing::StoreKindName);

}  // namespace
}  // namespace blkbench
