// The nop engine (fio's null): requests complete at the configured depth and batching,
// are counted like any engine's, and never reach the target — a target every read and
// fsync of which fails still runs, and a loop device's sector counters do not move.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "agent/executor/executor_test_util.h"
#include "common/testing/loop_device.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace blkbench {
namespace {

using exec_test::Execute;
using exec_test::ExpectSamplesAddUp;
using exec_test::Internal;
using exec_test::Job;
using exec_test::kMiB;
using exec_test::ModeName;
using exec_test::Outcome;
using ::testing::HasSubstr;
using testing::LoopDevice;

// /dev/null as a target: a read returns 0 bytes (a short read for every other engine) and
// fsync(2) fails with EINVAL.
constexpr char kDevNull[] = "/dev/null";

class NopEngineTest : public ::testing::TestWithParam<bool /*thread*/> {};

INSTANTIATE_TEST_SUITE_P(Modes, NopEngineTest, ::testing::Values(true, false), ModeName);

TEST_P(NopEngineTest, CompletesEveryRequestAtItsDepthAndBatches) {
  v1::JobSpec j = Job(v1::RANDRW, v1::NOP, GetParam());
  j.set_numjobs(2);
  j.set_iodepth(16);
  j.set_iodepth_batch_submit(4);
  j.set_iodepth_batch_complete_min(4);
  j.set_iodepth_batch_complete_max(8);
  j.set_io_size(8 * kMiB);  // 2048 I/Os per job
  j.set_fsync(32);
  j.set_end_fsync(true);
  Outcome run = Execute(kDevNull, 64 * kMiB, j, 0, std::chrono::milliseconds(1));
  ASSERT_TRUE(run.result.ok()) << run.result.status();
  const v1::RunResult& r = *run.result;
  EXPECT_EQ(r.runner(), "nop");
  EXPECT_EQ(r.io().read_ios() + r.io().write_ios(), 2 * 2048u);
  EXPECT_GT(r.io().write_ios(), 2 * 2048u / 4);  // rwmixread 50
  EXPECT_EQ(r.lat().count(), 2 * 2048u);
  EXPECT_EQ(Internal(r, "executor.submitted"), 2 * 2048);
  EXPECT_EQ(Internal(r, "executor.max_inflight"), 16);
  EXPECT_EQ(Internal(r, "executor.max_submit_batch"), 4);
  EXPECT_EQ(Internal(r, "executor.max_reap_batch"), 8);
  EXPECT_EQ(Internal(r, "executor.short_reaps"), 0);
  // Each job syncs every 32 writes and once at the end, without calling fsync(2).
  EXPECT_GE(Internal(r, "executor.fsyncs"), r.io().write_ios() / 32);
  ExpectSamplesAddUp(run);

  // The same job on psync fails on the first read: the target is as bad as promised.
  j.set_ioengine(v1::PSYNC);
  Outcome psync = Execute(kDevNull, 64 * kMiB, j);
  EXPECT_EQ(psync.result.status().code(), absl::StatusCode::kInternal);
  EXPECT_THAT(std::string(psync.result.status().message()), HasSubstr("short read"));
}

// fio's null engine is synchronous at iodepth 1 (FIO_SYNCIO): each request completes in
// queue(), one submit and one clock reading per I/O.
TEST_P(NopEngineTest, DepthOneCompletesInQueue) {
  v1::JobSpec j = Job(v1::READ, v1::NOP, GetParam());
  j.set_iodepth(1);
  j.set_io_size(4 * kMiB);
  Outcome run = Execute(kDevNull, 64 * kMiB, j);
  ASSERT_TRUE(run.result.ok()) << run.result.status();
  EXPECT_EQ(run.result->io().read_ios(), 1024u);
  EXPECT_EQ(Internal(*run.result, "executor.max_inflight"), 1);
  EXPECT_EQ(Internal(*run.result, "executor.submit_calls"), 1024);
  EXPECT_EQ(Internal(*run.result, "executor.reap_calls"), 0);
}

// Sectors read and written (fields 3 and 7 of /sys/block/<dev>/stat).
std::vector<uint64_t> Sectors(const LoopDevice& d) {
  const std::vector<std::string> f = absl::StrSplit(
      testing::ReadFileOr("/sys/block/" + d.name() + "/stat"), ' ', absl::SkipEmpty());
  std::vector<uint64_t> v(2, UINT64_MAX);
  if (f.size() > 6 && absl::SimpleAtoi(f[2], &v[0]) && absl::SimpleAtoi(f[6], &v[1])) return v;
  ADD_FAILURE() << "cannot read /sys/block/" << d.name() << "/stat";
  return v;
}

TEST_P(NopEngineTest, NeverTouchesTheDevice) {
  std::unique_ptr<LoopDevice> loop = LoopDevice::Create(64);
  if (loop == nullptr) GTEST_SKIP() << "losetup unavailable (needs root and loop support)";
  v1::JobSpec j = Job(v1::RANDRW, v1::NOP, GetParam());
  j.set_direct(true);
  j.set_iodepth(32);
  j.set_io_size(16 * kMiB);
  const std::vector<uint64_t> before = Sectors(*loop);
  Outcome run = Execute(loop->path(), loop->size(), j);
  ASSERT_TRUE(run.result.ok()) << run.result.status();
  EXPECT_EQ(run.result->io().read_ios() + run.result->io().write_ios(), 4096u);
  EXPECT_EQ(Sectors(*loop), before);

  // The counters do move for an engine that does I/O.
  j.set_ioengine(v1::LIBAIO);
  Outcome libaio = Execute(loop->path(), loop->size(), j);
  ASSERT_TRUE(libaio.result.ok()) << libaio.result.status();
  const std::vector<uint64_t> after = Sectors(*loop);
  EXPECT_GT(after[0], before[0]);
  EXPECT_GT(after[1], before[1]);
}

}  // namespace
}  // namespace blkbench
