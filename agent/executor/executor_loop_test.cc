// IoExecutor against a loop device the test attaches itself (skipped without losetup):
// direct I/O at depth and batching on a real queue (asynchronous engines), the sync engines
// with CPU, hipri errors, cancel (every engine).
#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "agent/executor/executor.h"
#include "agent/executor/executor_test_util.h"
#include "common/testing/loop_device.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace blkbench {
namespace {

using exec_test::AllEngines;
using exec_test::AsyncEngines;
using exec_test::EngineName;
using exec_test::Execute;
using exec_test::ExpectCancelStopsPromptly;
using exec_test::ExpectSamplesAddUp;
using exec_test::ForEachEngine;
using exec_test::Internal;
using exec_test::Job;
using exec_test::kMiB;
using exec_test::kMs;
using exec_test::ModeName;
using exec_test::Outcome;
using exec_test::SyncEngines;
using ::testing::HasSubstr;
using testing::LoopDevice;

class LoopTest : public ::testing::TestWithParam<bool /*thread*/> {
 protected:
  static void SetUpTestSuite() {
    absl::StatusOr<std::unique_ptr<LoopDevice>> d =
        LoopDevice::Attach(64 * kMiB, {.preallocate = true});
    if (d.ok()) loop_ = d->release();
  }
  static void TearDownTestSuite() {
    delete loop_;  // detaches
    loop_ = nullptr;
  }
  void SetUp() override {
    if (loop_ == nullptr) GTEST_SKIP() << "losetup unavailable (needs root and loop support)";
  }
  Outcome Go(const v1::JobSpec& j, std::chrono::nanoseconds interval = std::chrono::seconds(1)) {
    return Execute(loop_->path(), loop_->size(), j, 0, interval);
  }
  static LoopDevice* loop_;
};
LoopDevice* LoopTest::loop_ = nullptr;

INSTANTIATE_TEST_SUITE_P(Modes, LoopTest, ::testing::Values(true, false), ModeName);

TEST_P(LoopTest, DirectRandomReadsAtDepth) {
  ForEachEngine(AsyncEngines(), v1::RANDREAD, GetParam(),
                [&](v1::IoEngine /*engine*/, v1::JobSpec j) {
                  j.set_direct(true);
                  j.set_iodepth(32);
                  j.set_numjobs(2);
                  j.set_offset_increment(32 * kMiB);
                  j.set_size(32 * kMiB);
                  j.set_io_size(8 * kMiB);
                  Outcome run = Go(j, std::chrono::milliseconds(10));
                  ASSERT_TRUE(run.result.ok()) << run.result.status();
                  EXPECT_EQ(run.result->io().read_ios(), 2 * 2048u);
                  EXPECT_EQ(Internal(*run.result, "executor.max_inflight"), 32);
                  ExpectSamplesAddUp(run);
                });
}

TEST_P(LoopTest, BatchesOnARealQueue) {
  ForEachEngine(AsyncEngines(), v1::RANDRW, GetParam(),
                [&](v1::IoEngine /*engine*/, v1::JobSpec j) {
                  j.set_direct(true);
                  j.set_iodepth(16);
                  j.set_iodepth_batch_submit(8);
                  j.set_iodepth_batch_complete_min(2);
                  j.set_iodepth_batch_complete_max(8);
                  j.set_io_size(8 * kMiB);
                  Outcome run = Go(j);
                  ASSERT_TRUE(run.result.ok()) << run.result.status();
                  const v1::RunResult& r = *run.result;
                  EXPECT_EQ(r.io().read_ios() + r.io().write_ios(), 2048u);
                  EXPECT_LE(Internal(r, "executor.max_inflight"), 16);
                  EXPECT_LE(Internal(r, "executor.max_submit_batch"), 8);
                  EXPECT_LE(Internal(r, "executor.max_reap_batch"), 8);
                  EXPECT_EQ(Internal(r, "executor.short_reaps"), 0);
                });
}

TEST_P(LoopTest, PsyncDirectWithCpu) {
  ForEachEngine(SyncEngines(), v1::RANDWRITE, GetParam(),
                [&](v1::IoEngine /*engine*/, v1::JobSpec j) {
                  j.set_direct(true);
                  j.set_time_based(true);
                  j.set_runtime_ns(200 * kMs);
                  Outcome run = Go(j, std::chrono::milliseconds(50));
                  ASSERT_TRUE(run.result.ok()) << run.result.status();
                  EXPECT_GT(run.result->io().write_ios(), 100u);
                  EXPECT_GT(run.result->usr_cpu_ns() + run.result->sys_cpu_ns(), 0u);
                  EXPECT_EQ(Internal(*run.result, "executor.max_inflight"), 1);
                  ExpectSamplesAddUp(run);
                });
}

TEST_P(LoopTest, HipriOnALoopDeviceFailsClearly) {
  v1::JobSpec j = Job(v1::RANDREAD, v1::IO_URING, GetParam());
  j.set_direct(true);
  j.set_hipri(true);
  j.set_time_based(true);
  j.set_runtime_ns(5'000 * kMs);
  Outcome run = Go(j);
  EXPECT_EQ(run.result.status().code(), absl::StatusCode::kInvalidArgument) << run.result.status();
  EXPECT_THAT(std::string(run.result.status().message()), HasSubstr("hipri"));
  EXPECT_LT(run.wall, std::chrono::seconds(3));
}

// pvsync2's hipri is RWF_HIPRI on each call; on a queue without poll queues the block
// layer clears the polled flag and completes by interrupt, so the job runs (unlike
// io_uring's IOPOLL ring above, which the kernel refuses).
TEST_P(LoopTest, Pvsync2HipriRunsWithoutPollQueues) {
  v1::JobSpec j = Job(v1::RANDREAD, v1::PVSYNC2, GetParam());
  j.set_direct(true);
  j.set_hipri(true);
  j.set_io_size(kMiB);
  Outcome run = Go(j);
  ASSERT_TRUE(run.result.ok()) << run.result.status();
  EXPECT_EQ(run.result->runner(), "pvsync2");
  EXPECT_EQ(run.result->io().read_ios(), 256u);
}

TEST_P(LoopTest, CancelStopsPromptly) {
  ForEachEngine(AllEngines(), v1::RANDREAD, GetParam(),
                [&](v1::IoEngine /*engine*/, v1::JobSpec j) {
                  j.set_direct(true);
                  j.set_iodepth(32);
                  ExpectCancelStopsPromptly(loop_->path(), loop_->size(), j);
                });
}

}  // namespace
}  // namespace blkbench
