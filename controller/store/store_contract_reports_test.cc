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

using ::blkbench::testing::AssignRunOne;
using ::blkbench::testing::FinishReport;
using ::blkbench::testing::MakeExperiment;
using ::blkbench::testing::SampleReport;
using ::blkbench::testing::StoreKind;

class ReportsTest : public ::blkbench::testing::StoreContractTest {};

TEST_P(ReportsTest, RefusedReportsRollBackAloneAndTheRestCommits) {
  Store& store = *store_;
  ASSERT_NO_FATAL_FAILURE(AssignRunOne(store));
  const std::vector<AgentReport> batch = {
      SampleReport(1, 1),        // stored; the run becomes RUNNING
      SampleReport(1, 5, "L0"),  // a stale lease: refused
      SampleReport(9, 1),        // no such run
      FinishReport(2),           // sample 2 is not stored yet: refused, the run stays RUNNING
      SampleReport(1, 2),        // stored
      SampleReport(1, 1),        // a duplicate: OK, changes nothing
      FinishReport(2),           // now complete: DONE with its result
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
