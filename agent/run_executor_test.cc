// Tests for RunExecutor: allowlist refusals, a run on a regular file, and queue settings
// applied during a run on a real loop device and restored after it.
#include "agent/run_executor.h"

#include <fstream>
#include <functional>
#include <utility>
#include <vector>

#include "agent/runners.h"
#include "common/testing/loop_device.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace blkbench {
namespace {

using ::testing::HasSubstr;
using testing::LoopDevice;
using testing::TempDir;

v1::RunAssignment Assignment(const std::string& path, v1::RwMode rw = v1::RANDREAD) {
  v1::RunAssignment a;
  a.set_run_id(7);
  a.set_attempt(1);
  a.set_lease_id("L1");
  a.set_device_path(path);
  a.set_sample_interval_ms(50);
  v1::JobSpec* job = a.mutable_cell()->mutable_job();
  job->set_rw(rw);
  job->set_bs(4096);
  job->set_size(4 << 20);
  job->set_iodepth(4);
  job->set_numjobs(1);
  job->set_iodepth_batch_submit(1);
  job->set_iodepth_batch_complete_min(1);
  job->set_iodepth_batch_complete_max(4);
  job->set_ioengine(v1::IO_URING);
  job->set_thread(true);
  job->set_io_size(1 << 20);
  return a;
}

class RunExecutorTest : public ::testing::Test {
 protected:
  void Init(std::vector<AllowedDevice> devices) {
    config_.state_dir = state_.path();
    config_.devices = std::move(devices);
    journal_ = std::move(*QueueSettingsJournal::Open(state_.path()));
    executor_ = std::make_unique<RunExecutor>(config_, *journal_, DefaultRunnerFactory());
  }
  v1::RunFinished Run(const v1::RunAssignment& a) {
    samples_ = 0;
    return executor_->Execute(a, cancel_, [this](const v1::Sample&) { ++samples_; });
  }

  TempDir dir_{"run_executor_test"};
  TempDir state_{"run_executor_state"};
  AgentConfig config_;
  std::unique_ptr<QueueSettingsJournal> journal_;
  std::unique_ptr<RunExecutor> executor_;
  std::atomic<bool> cancel_{false};
  int samples_ = 0;
};

TEST_F(RunExecutorTest, PathNotOnAllowlistIsRefused) {
  const std::string file = dir_.File("data");
  std::ofstream(file) << std::string(1 << 20, 'x');
  Init({{dir_.File("other"), "file"}});
  v1::RunFinished f = Run(Assignment(file, v1::RANDWRITE));
  EXPECT_EQ(f.outcome(), v1::RUN_OUTCOME_FAILED);
  EXPECT_THAT(f.error(), HasSubstr("not on this agent's allowlist"));
  EXPECT_EQ(testing::ReadFileOr(file), std::string(1 << 20, 'x'));
}

TEST_F(RunExecutorTest, RunsOnAnAllowlistedRegularFile) {
  const std::string file = dir_.File("data");
  std::ofstream(file) << std::string(8 << 20, '\0');
  Init({{file, "file"}});
  v1::RunFinished f = Run(Assignment(file));
  ASSERT_EQ(f.outcome(), v1::RUN_OUTCOME_SUCCEEDED) << f.error();
  EXPECT_EQ(f.run_id(), 7u);
  EXPECT_EQ(f.lease_id(), "L1");
  EXPECT_EQ(f.result().io().read_bytes(), 1u << 20);
  EXPECT_EQ(f.result().device().path(), file);
  EXPECT_FALSE(f.result().device().is_block());
  EXPECT_FALSE(f.result().host().kernel_release().empty());
}

TEST_F(RunExecutorTest, SimulatedDeviceRunsOnTheEngineAndTouchesNoHardware) {
  Init({});
  v1::RunAssignment a = Assignment("sim:null_blk");
  a.mutable_cell()->mutable_target()->set_device_class("sim:null_blk");
  a.mutable_cell()->mutable_job()->set_runtime_ns(20'000'000);
  a.mutable_cell()->mutable_job()->set_time_based(true);
  v1::RunFinished f = Run(a);
  ASSERT_EQ(f.outcome(), v1::RUN_OUTCOME_SUCCEEDED) << f.error();
  EXPECT_EQ(f.result().runner(), "engine");
  EXPECT_TRUE(f.result().device().simulated());
  EXPECT_EQ(f.result().device().device_class(), "sim:null_blk");
  EXPECT_GT(f.result().iops(), 0);
  EXPECT_GT(samples_, 0);
}

TEST_F(RunExecutorTest, SimulatedClassNotOfferedIsRefused) {
  Init({});
  v1::RunFinished f = Run(Assignment("sim:tape"));
  EXPECT_EQ(f.outcome(), v1::RUN_OUTCOME_FAILED);
  EXPECT_THAT(f.error(), HasSubstr("not on this agent's allowlist"));
}

TEST_F(RunExecutorTest, QueueSettingsAppliedDuringRunAndRestoredAfter) {
  auto loop = LoopDevice::Create(16);
  if (!loop) GTEST_SKIP() << "loop devices unavailable";
  const std::string sched = loop->SysfsQueue("scheduler");
  const std::string nr = loop->SysfsQueue("nr_requests");
  Init({{loop->path(), "loop"}});
  v1::RunAssignment a = Assignment(loop->path());
  a.mutable_cell()->mutable_queue()->set_scheduler("bfq");
  a.mutable_cell()->mutable_queue()->set_nr_requests(32);
  a.mutable_cell()->mutable_job()->set_direct(true);
  v1::RunFinished f = Run(a);
  ASSERT_EQ(f.outcome(), v1::RUN_OUTCOME_SUCCEEDED) << f.error();
  EXPECT_EQ(f.result().applied().scheduler(), "bfq");
  EXPECT_EQ(f.result().applied().nr_requests(), 32u);
  EXPECT_EQ(f.result().device().kernel_name(), loop->name());
  EXPECT_EQ(loop->SysfsQueue("scheduler"), sched);
  EXPECT_EQ(loop->SysfsQueue("nr_requests"), nr);
}

TEST_F(RunExecutorTest, UnknownSchedulerFailsAndChangesNothing) {
  auto loop = LoopDevice::Create(16);
  if (!loop) GTEST_SKIP() << "loop devices unavailable";
  const std::string sched = loop->SysfsQueue("scheduler");
  Init({{loop->path(), "loop"}});
  v1::RunAssignment a = Assignment(loop->path(), v1::RANDWRITE);
  a.mutable_cell()->mutable_queue()->set_scheduler("cfq");
  const uint64_t writes = loop->WritesCompleted();
  v1::RunFinished f = Run(a);
  EXPECT_EQ(f.outcome(), v1::RUN_OUTCOME_FAILED);
  EXPECT_THAT(f.error(), HasSubstr("cfq"));
  EXPECT_EQ(loop->SysfsQueue("scheduler"), sched);
  EXPECT_EQ(loop->WritesCompleted(), writes);
}

// A controller (buggy, compromised or fake) cannot make the agent run what the matrix
// parser refuses: each out-of-bounds cell fails before the device is opened.
TEST_F(RunExecutorTest, OutOfBoundsAssignmentsAreRefusedBeforeAnyWrite) {
  auto loop = LoopDevice::Create(16);
  if (!loop) GTEST_SKIP() << "loop devices unavailable";
  Init({{loop->path(), "loop"}});
  const uint64_t writes = loop->WritesCompleted();
  std::vector<std::pair<std::function<void(v1::CellSpec&)>, std::string>> bad = {
      {[](v1::CellSpec& c) { c.mutable_job()->set_numjobs(20000); }, "numjobs 20000"},
      {[](v1::CellSpec& c) { c.mutable_job()->set_iodepth(4'000'000'000u); }, "iodepth"},
      {[](v1::CellSpec& c) { c.mutable_job()->set_bs(1000); }, "bs 1000"},
      {[](v1::CellSpec& c) { c.mutable_job()->set_rwmixread(101); }, "rwmixread"},
  };
  for (const auto& [mutate, what] : bad) {
    v1::RunAssignment a = Assignment(loop->path(), v1::RANDWRITE);
    mutate(*a.mutable_cell());
    v1::RunFinished f = Run(a);
    EXPECT_EQ(f.outcome(), v1::RUN_OUTCOME_FAILED) << what;
    EXPECT_THAT(f.error(), HasSubstr("refused the assignment")) << what;
    EXPECT_THAT(f.error(), HasSubstr(what));
  }
  EXPECT_EQ(loop->WritesCompleted(), writes);
}

}  // namespace
}  // namespace blkbench
