// Tests for RunContext::place_job in the IoExecutor: called once per job with the job's own
// task id, after setup and before the job's first I/O, and an error stops the run unwritten.
#include <sys/types.h>
#include <unistd.h>

#include <atomic>
#include <map>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "agent/executor/executor.h"
#include "agent/executor/executor_test_util.h"
#include "common/testing/loop_device.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace blkbench {
namespace {

using exec_test::Job;
using exec_test::kMiB;
using exec_test::ModeName;
using ::testing::HasSubstr;
using testing::TempFile;

class PlaceJobTest : public ::testing::TestWithParam<bool /*thread*/> {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<TempFile>> f = TempFile::Create(4 * kMiB);
    ASSERT_TRUE(f.ok()) << f.status();
    file_ = std::move(*f);
  }
  RunContext Context(uint32_t numjobs) const {
    v1::JobSpec job = Job(v1::RANDWRITE, v1::PSYNC, GetParam());
    job.set_numjobs(numjobs);
    job.set_size(1 * kMiB);
    job.set_offset_increment(1 * kMiB);
    job.set_io_size(256 * 1024);
    RunContext ctx;
    *ctx.cell.mutable_job() = job;
    ctx.target_path = file_->path();
    ctx.target_size = file_->size();
    return ctx;
  }
  bool FileIsAllZero() const {
    absl::StatusOr<std::string> data = file_->Contents();
    return data.ok() && data->find_first_not_of('\0') == std::string::npos;
  }
  std::unique_ptr<TempFile> file_;
};

INSTANTIATE_TEST_SUITE_P(Modes, PlaceJobTest, ::testing::Values(true, false), ModeName);

TEST_P(PlaceJobTest, EveryJobIsPlacedOnceWithItsTaskIdBeforeItWrites) {
  RunContext ctx = Context(3);
  std::map<uint32_t, int> placed;
  bool wrote_before_placing = false;
  ctx.place_job = [&](uint32_t job, int tid) {
    placed[job] = tid;
    // Jobs write non-zero data: the file still being zero means no job has written yet.
    if (!FileIsAllZero()) wrote_before_placing = true;
    // A thread job is one of our threads; a process job is a live child process.
    const std::string task =
        GetParam() ? absl::StrCat("/proc/self/task/", tid) : absl::StrCat("/proc/", tid, "/stat");
    EXPECT_EQ(access(task.c_str(), F_OK), 0) << task;
    if (!GetParam()) {
      EXPECT_NE(tid, getpid());
    }
    return absl::OkStatus();
  };
  absl::StatusOr<v1::RunResult> result = NewIoExecutor()->Run(ctx);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->io().write_bytes(), 3u * 256 * 1024);
  ASSERT_EQ(placed.size(), 3u);
  EXPECT_NE(placed[0], placed[1]);
  EXPECT_NE(placed[1], placed[2]);
  EXPECT_NE(placed[0], GetParam() ? static_cast<int>(gettid()) : getpid());
  EXPECT_FALSE(wrote_before_placing);
  EXPECT_FALSE(FileIsAllZero());
}

TEST_P(PlaceJobTest, APlacementErrorEndsTheRunBeforeAnyIo) {
  RunContext ctx = Context(2);
  int calls = 0;
  ctx.place_job = [&](uint32_t job, int) {
    ++calls;
    return job == 1 ? absl::PermissionDeniedError("no cgroup for job 1") : absl::OkStatus();
  };
  absl::StatusOr<v1::RunResult> result = NewIoExecutor()->Run(ctx);
  EXPECT_EQ(result.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(result.status().message(), HasSubstr("no cgroup for job 1"));
  EXPECT_EQ(calls, 2);
  EXPECT_TRUE(FileIsAllZero());
}

}  // namespace
}  // namespace blkbench
