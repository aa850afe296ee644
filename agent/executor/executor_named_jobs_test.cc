// The IoExecutor with named jobs (CellSpec.jobs) on a real loop device: each job's
// threads run with their own plan (engine, rw, bs, region) at once in one run, are placed
// in the cell's thread order, and RunResult.jobs splits the total exactly.
#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "agent/executor/executor.h"
#include "agent/executor/executor_test_util.h"
#include "common/histogram.h"
#include "common/testing/loop_device.h"
#include "gtest/gtest.h"

namespace blkbench {
namespace {

using exec_test::Job;
using exec_test::kMiB;
using exec_test::ModeName;
using testing::LoopDevice;

uint64_t HistCount(const v1::Histogram& h) {
  absl::StatusOr<LatencyHistogram> l = LatencyHistogram::FromProto(h);
  EXPECT_TRUE(l.ok()) << l.status();
  return l.ok() ? l->count() : 0;
}

class NamedJobsLoopTest : public ::testing::TestWithParam<bool /*thread*/> {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<LoopDevice>> d =
        LoopDevice::Attach(16 * kMiB, {.preallocate = true});
    if (!d.ok()) GTEST_SKIP() << "losetup unavailable: " << d.status();
    loop_ = std::move(*d);
  }
  std::unique_ptr<LoopDevice> loop_;
};

INSTANTIATE_TEST_SUITE_P(Modes, NamedJobsLoopTest, ::testing::Values(true, false), ModeName);

// A 4k psync reader over the first 4 MiB and two 64k io_uring writer threads over
// [8, 12) MiB: bytes-limited, so each job's counts are exact.
TEST_P(NamedJobsLoopTest, EachJobRunsItsOwnPlanAndReportsItsShare) {
  RunContext ctx;
  v1::NamedJob& reader = *ctx.cell.add_jobs();
  reader.set_name("reader");
  *reader.mutable_job() = Job(v1::RANDREAD, v1::PSYNC, GetParam());
  reader.mutable_job()->set_direct(true);
  reader.mutable_job()->set_size(4 * kMiB);
  reader.mutable_job()->set_io_size(1 * kMiB);
  v1::NamedJob& writer = *ctx.cell.add_jobs();
  writer.set_name("writer");
  *writer.mutable_job() = Job(v1::WRITE, v1::IO_URING, GetParam());
  writer.mutable_job()->set_direct(true);
  writer.mutable_job()->set_bs(64 * 1024);
  writer.mutable_job()->set_iodepth(8);
  writer.mutable_job()->set_numjobs(2);
  writer.mutable_job()->set_offset(8 * kMiB);
  writer.mutable_job()->set_offset_increment(2 * kMiB);
  writer.mutable_job()->set_size(2 * kMiB);
  *ctx.cell.mutable_job() = reader.job();
  ctx.target_path = loop_->path();
  ctx.target_size = loop_->size();
  ctx.logical_block_size = 512;
  std::map<uint32_t, int> placed;
  ctx.place_job = [&](uint32_t job, int tid) {
    placed[job] = tid;
    return absl::OkStatus();
  };
  std::vector<v1::Sample> samples;
  ctx.sample_interval = std::chrono::milliseconds(1);
  ctx.on_sample = [&](const v1::Sample& s) { samples.push_back(s); };

  absl::StatusOr<v1::RunResult> r = NewIoExecutor()->Run(ctx);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->jobs_size(), 2);
  // Each sample's per-job shares (Sample.jobs) add up to the job's totals.
  ASSERT_FALSE(samples.empty());
  uint64_t ios[2][2] = {{0, 0}, {0, 0}}, completions[2] = {0, 0};
  for (const v1::Sample& s : samples) {
    ASSERT_EQ(s.jobs_size(), 2);
    for (int k = 0; k < 2; ++k) {
      EXPECT_EQ(s.jobs(k).index(), static_cast<uint32_t>(k));
      ios[k][0] += s.jobs(k).io().read_ios();
      ios[k][1] += s.jobs(k).io().write_ios();
      completions[k] += HistCount(s.jobs(k).read_lat()) + HistCount(s.jobs(k).write_lat());
    }
  }
  EXPECT_EQ(samples[0].jobs(1).name(), "writer");
  EXPECT_EQ(ios[0][0], r->jobs(0).io().read_ios());
  EXPECT_EQ(ios[0][1], 0u);
  EXPECT_EQ(ios[1][1], r->jobs(1).io().write_ios());
  EXPECT_EQ(completions[0], 256u);
  EXPECT_EQ(completions[1], 64u);
  const v1::JobResult& rj = r->jobs(0);
  const v1::JobResult& wj = r->jobs(1);
  EXPECT_EQ(rj.name(), "reader");
  EXPECT_EQ(wj.name(), "writer");
  EXPECT_EQ(rj.io().read_bytes(), 1 * kMiB);
  EXPECT_EQ(rj.io().read_ios(), 256u);
  EXPECT_EQ(rj.io().write_ios(), 0u);
  EXPECT_EQ(wj.io().write_bytes(), 2 * 2 * kMiB);  // each thread its 2 MiB region once
  EXPECT_EQ(wj.io().write_ios(), 64u);
  EXPECT_EQ(wj.io().read_ios(), 0u);
  // The jobs add up to the run.
  EXPECT_EQ(rj.io().read_ios() + wj.io().read_ios(), r->io().read_ios());
  EXPECT_EQ(rj.io().write_ios() + wj.io().write_ios(), r->io().write_ios());
  EXPECT_EQ(HistCount(rj.lat()) + HistCount(wj.lat()), HistCount(r->lat()));
  EXPECT_EQ(HistCount(rj.read_lat()), 256u);
  EXPECT_EQ(HistCount(wj.write_lat()), 64u);
  EXPECT_NEAR(rj.iops() + wj.iops(), r->iops(), 1e-6 * r->iops());
  EXPECT_GT(rj.lat_summary().p50_ns(), 0u);
  // Three threads, placed by their index in the cell: reader 0, writer 1 and 2.
  ASSERT_EQ(placed.size(), 3u);
  EXPECT_NE(placed[1], placed[2]);
}

// A named job's own mistake names the job.
TEST_P(NamedJobsLoopTest, AJobsPlanErrorNamesTheJob) {
  RunContext ctx;
  v1::NamedJob& a = *ctx.cell.add_jobs();
  a.set_name("a");
  *a.mutable_job() = Job(v1::READ, v1::PSYNC, GetParam());
  v1::NamedJob& b = *ctx.cell.add_jobs();
  b.set_name("b");
  *b.mutable_job() = Job(v1::READ, v1::PSYNC, GetParam());
  b.mutable_job()->set_offset(64 * kMiB);  // beyond the 16 MiB device
  *ctx.cell.mutable_job() = a.job();
  ctx.target_path = loop_->path();
  ctx.target_size = loop_->size();
  absl::StatusOr<v1::RunResult> r = NewIoExecutor()->Run(ctx);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(r.status().message().substr(0, 39), "job 'b' option offset/offset_increment:");
}

}  // namespace
}  // namespace blkbench
