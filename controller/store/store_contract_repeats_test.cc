// Store::AddRuns on every implementation: repeat numbering, validation, reopening an ended
// experiment.
#include <gtest/gtest.h>

#include <map>
#include <memory>

#include "controller/store/store_contract.h"

namespace blkbench {
namespace {

using ::blkbench::testing::MakeExperiment;
using ::blkbench::testing::MakeResult;
using ::blkbench::testing::StoreKind;

class AddRunsTest : public ::blkbench::testing::StoreContractTest {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(StoreContractTest::SetUp());
    if (IsSkipped()) return;
    absl::StatusOr<uint64_t> id = store_->CreateExperiment(MakeExperiment("e", 3, 2));
    ASSERT_TRUE(id.ok()) << id.status();
    id_ = *id;
  }

  uint64_t id_ = 0;
};

TEST_P(AddRunsTest, NewRunsContinueEachCellsRepeatsAndAreQueued) {
  absl::StatusOr<std::vector<uint64_t>> first = store_->AddRuns(id_, {2, 0}, 2, 1700000001000);
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_EQ(first->size(), 4u);
  absl::StatusOr<std::vector<uint64_t>> second = store_->AddRuns(id_, {0}, 1, 1700000002000);
  ASSERT_TRUE(second.ok()) << second.status();

  absl::StatusOr<v1::Experiment> e = store_->GetExperiment(id_, false);
  ASSERT_TRUE(e.ok()) << e.status();
  ASSERT_EQ(e->runs_size(), 6 + 5);
  std::map<uint32_t, std::vector<uint32_t>> repeats;  // by cell, in id order
  for (const v1::Run& r : e->runs()) repeats[r.cell_index()].push_back(r.repeat());
  EXPECT_EQ(repeats[0], (std::vector<uint32_t>{0, 1, 2, 3, 4}));
  EXPECT_EQ(repeats[1], (std::vector<uint32_t>{0, 1}));
  EXPECT_EQ(repeats[2], (std::vector<uint32_t>{0, 1, 2, 3}));
  // Repeat-major: the first call made (cell 2, rep 2), (cell 0, rep 2), (2, 3), (0, 3).
  const v1::Run& added = e->runs(6);
  EXPECT_EQ(added.id(), (*first)[0]);
  EXPECT_EQ(added.cell_index(), 2u);
  EXPECT_EQ(added.state(), v1::RUN_QUEUED);
  EXPECT_EQ(added.attempt(), 0u);
  EXPECT_EQ(added.created_unix_ms(), 1700000001000);
  EXPECT_EQ(e->runs(7).cell_index(), 0u);
  EXPECT_EQ(e->repeats(), 2u);  // the matrix's own repeats are unchanged
}

TEST_P(AddRunsTest, AnEndedExperimentRunsAgainButACanceledOneDoesNot) {
  absl::StatusOr<v1::Experiment> e = store_->GetExperiment(id_, false);
  for (const v1::Run& r : e->runs()) {
    v1::Run run = r;
    run.set_attempt(1);
    run.set_state(v1::RUN_RUNNING);
    ASSERT_TRUE(store_->UpdateRun(run).ok());
    const v1::RunResult result = MakeResult(1000);
    ASSERT_TRUE(store_->FinishRun(r.id(), 1, v1::RUN_DONE, "", 5, &result).ok());
  }
  ASSERT_TRUE(store_->UpdateExperimentState(id_, v1::EXPERIMENT_DONE, "", 99).ok());
  ASSERT_TRUE(store_->AddRuns(id_, {1}, 3, 7).ok());
  e = store_->GetExperiment(id_, false);
  EXPECT_EQ(e->state(), v1::EXPERIMENT_RUNNING);
  EXPECT_EQ(e->finished_unix_ms(), 0);

  ASSERT_TRUE(store_->UpdateExperimentState(id_, v1::EXPERIMENT_CANCELED, "", 100).ok());
  EXPECT_EQ(store_->AddRuns(id_, {1}, 1, 8).status().code(), absl::StatusCode::kFailedPrecondition);
}

TEST_P(AddRunsTest, BadRequestsChangeNothing) {
  EXPECT_EQ(store_->AddRuns(id_, {0}, 0, 1).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(store_->AddRuns(id_, {}, 1, 1).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(store_->AddRuns(id_, {1, 1}, 1, 1).status().code(), absl::StatusCode::kInvalidArgument);
  // Cell 0 is fine but cell 7 does not exist: the whole call is rolled back.
  EXPECT_EQ(store_->AddRuns(id_, {0, 7}, 1, 1).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(store_->AddRuns(id_ + 1, {0}, 1, 1).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(store_->GetExperiment(id_, false)->runs_size(), 6);
}

INSTANTIATE_TEST_SUITE_P(Sqlite, AddRunsTest, ::testing::Values(StoreKind::kSqlite),
                         ::blkbench::testing::StoreKindName);
INSTANTIATE_TEST_SUITE_P(Postgres, AddRunsTest, ::testing::Values(StoreKind::kPostgres),
                         ::blkbench::testing::StoreKindName);

}  // namespace
}  // namespace blkbench
