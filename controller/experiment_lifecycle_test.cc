// The lifecycle rules the controller and the CLI's local session share.
#include "controller/experiment_lifecycle.h"

#include "gtest/gtest.h"

namespace blkbench {
namespace {

v1::RunFinished WithOutcome(v1::RunOutcome outcome, const std::string& error = "") {
  v1::RunFinished f;
  f.set_outcome(outcome);
  f.set_error(error);
  return f;
}

TEST(ExperimentLifecycleTest, NewExperimentHoldsTheMatrixQueued) {
  workloads::Matrix m;
  m.name = "n";
  m.repeats = 3;
  m.cells.resize(2);
  m.cells[1].set_index(1);
  const v1::Experiment e = NewExperiment(m, "f.yaml", "text", "alice", 42);
  EXPECT_EQ(e.name(), "n");
  EXPECT_EQ(e.file_name(), "f.yaml");
  EXPECT_EQ(e.matrix_text(), "text");
  EXPECT_EQ(e.submitted_by(), "alice");
  EXPECT_EQ(e.repeats(), 3u);
  EXPECT_EQ(e.created_unix_ms(), 42);
  EXPECT_EQ(e.state(), v1::EXPERIMENT_QUEUED);
  ASSERT_EQ(e.cells_size(), 2);
  EXPECT_EQ(e.cells(1).index(), 1u);
  EXPECT_EQ(e.runs_size(), 0);  // the store creates them
}

TEST(ExperimentLifecycleTest, ASuccessWithIoIsDoneWithItsResult) {
  v1::RunFinished f = WithOutcome(v1::RUN_OUTCOME_SUCCEEDED);
  f.mutable_result()->set_duration_ns(1000);
  f.mutable_result()->mutable_io()->set_write_ios(1);
  const RunEnd end = RunEndOf(f);
  EXPECT_EQ(end.state, v1::RUN_DONE);
  EXPECT_EQ(end.error, "");
  EXPECT_TRUE(end.has_result);
}

TEST(ExperimentLifecycleTest, ASuccessWithoutIoIsAFailure) {
  v1::RunFinished f = WithOutcome(v1::RUN_OUTCOME_SUCCEEDED);
  f.mutable_result()->set_duration_ns(1000);
  const RunEnd end = RunEndOf(f);
  EXPECT_EQ(end.state, v1::RUN_FAILED);
  EXPECT_FALSE(end.error.empty());
  EXPECT_FALSE(end.has_result);
}

TEST(ExperimentLifecycleTest, FailuresAndCancelsKeepTheirErrorAndNoResult) {
  const RunEnd failed = RunEndOf(WithOutcome(v1::RUN_OUTCOME_FAILED, "EIO"));
  EXPECT_EQ(failed.state, v1::RUN_FAILED);
  EXPECT_EQ(failed.error, "EIO");
  EXPECT_FALSE(failed.has_result);
  const RunEnd canceled = RunEndOf(WithOutcome(v1::RUN_OUTCOME_CANCELED, "stop"));
  EXPECT_EQ(canceled.state, v1::RUN_CANCELED);
  EXPECT_EQ(canceled.error, "stop");
  EXPECT_FALSE(canceled.has_result);
}

TEST(ExperimentLifecycleTest, AnExperimentEndsCanceledFailedOrDone) {
  const ExperimentEnd canceled = EndOfExperiment(4, 2, /*cancel_requested=*/true);
  EXPECT_EQ(canceled.state, v1::EXPERIMENT_CANCELED);
  EXPECT_EQ(canceled.error, "");
  const ExperimentEnd failed = EndOfExperiment(4, 2, false);
  EXPECT_EQ(failed.state, v1::EXPERIMENT_FAILED);
  EXPECT_EQ(failed.error, "2 of 4 runs failed");
  const ExperimentEnd done = EndOfExperiment(4, 0, false);
  EXPECT_EQ(done.state, v1::EXPERIMENT_DONE);
  EXPECT_EQ(done.error, "");
}

}  // namespace
}  // namespace blkbench
