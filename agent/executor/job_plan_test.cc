// Tests for JobSpec → per-job plan resolution: fio defaults/fixups, regions, validation.
#include "agent/executor/job_plan.h"

#include <limits>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace blkbench {
namespace {

using ::testing::HasSubstr;

constexpr uint64_t kMiB = 1 << 20;

RunContext Ctx(const v1::JobSpec& job, uint64_t target_size = 64 * kMiB) {
  RunContext ctx;
  *ctx.cell.mutable_job() = job;
  ctx.target_path = "/dev/fake";
  ctx.target_size = target_size;
  return ctx;
}

v1::JobSpec Job(v1::RwMode rw, v1::IoEngine engine = v1::IO_URING) {
  v1::JobSpec j;
  j.set_rw(rw);
  j.set_ioengine(engine);
  return j;
}

TEST(JobPlan, ZeroOptionsTakeFioDefaults) {
  absl::StatusOr<RunPlan> p = BuildRunPlan(Ctx(Job(v1::RANDREAD)));
  ASSERT_TRUE(p.ok()) << p.status();
  ASSERT_EQ(p->jobs.size(), 1u);
  const JobPlan& j = p->jobs[0];
  EXPECT_EQ(j.io.block_size, 4096u);
  EXPECT_EQ(p->job.iodepth, 1u);
  EXPECT_EQ(p->job.batch_submit, 1u);
  EXPECT_EQ(p->job.complete_min, 0u);
  EXPECT_EQ(p->job.complete_max, 1u);
  EXPECT_FALSE(p->job.writes);
  EXPECT_EQ(j.io.read_percent, 100u);
  EXPECT_EQ(j.io.region_start, 0u);
  EXPECT_EQ(j.io.region_len, 64 * kMiB);
  EXPECT_EQ(j.io_budget, 64 * kMiB);
  EXPECT_EQ(p->job.engine_name, "io_uring");
  EXPECT_EQ(Job(v1::READ, v1::IO_ENGINE_UNSPECIFIED).ioengine(), v1::IO_ENGINE_UNSPECIFIED);
  EXPECT_EQ(BuildRunPlan(Ctx(Job(v1::READ, v1::IO_ENGINE_UNSPECIFIED)))->job.engine_name, "psync");
}

void ExpectInvalid(const v1::JobSpec& j, const char* needle, uint64_t size = 64 * kMiB) {
  absl::StatusOr<RunPlan> p = BuildRunPlan(Ctx(j, size));
  ASSERT_EQ(p.status().code(), absl::StatusCode::kInvalidArgument) << needle;
  EXPECT_THAT(std::string(p.status().message()), HasSubstr(needle));
}

// fio's "0 means ..." fixups apply; settings fio would clamp silently (a batch above
// iodepth, a completion max below the min) are refused, as the matrix parser refuses
// them: one rule, common/resolved_job.h.
TEST(JobPlan, BatchFixupsLikeFio) {
  v1::JobSpec j = Job(v1::RANDREAD);
  j.set_iodepth(32);
  j.set_iodepth_batch_submit(0);  // 0 = iodepth
  j.set_iodepth_batch_complete_min(8);
  j.set_iodepth_batch_complete_max(0);  // 0 = min
  absl::StatusOr<RunPlan> p = BuildRunPlan(Ctx(j));
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->job.batch_submit, 32u);
  EXPECT_EQ(p->job.complete_min, 8u);
  EXPECT_EQ(p->job.complete_max, 8u);
  j.set_iodepth_batch_complete_max(4);  // < min
  ExpectInvalid(j, "iodepth_batch_complete_min (8) is larger than iodepth_batch_complete_max (4)");
  j.set_iodepth_batch_complete_max(32);
  j.set_iodepth_batch_submit(100);  // > iodepth
  ExpectInvalid(j, "iodepth_batch_submit (100) is larger than iodepth (32)");
  // psync is always depth 1.
  v1::JobSpec s = Job(v1::RANDREAD, v1::PSYNC);
  s.set_iodepth(32);
  EXPECT_EQ(BuildRunPlan(Ctx(s))->job.iodepth, 1u);
}

TEST(JobPlan, RegionsFollowOffsetIncrement) {
  v1::JobSpec j = Job(v1::RANDRW);
  j.set_numjobs(3);
  j.set_offset(kMiB);
  j.set_offset_increment(2 * kMiB);
  j.set_size(kMiB);
  j.set_rwmixread(70);
  j.set_randseed(100);
  absl::StatusOr<RunPlan> p = BuildRunPlan(Ctx(j));
  ASSERT_TRUE(p.ok()) << p.status();
  ASSERT_EQ(p->jobs.size(), 3u);
  for (uint32_t i = 0; i < 3; ++i) {
    EXPECT_EQ(p->jobs[i].index, i);
    EXPECT_EQ(p->jobs[i].io.region_start, kMiB + i * 2 * kMiB);
    EXPECT_EQ(p->jobs[i].io.region_len, kMiB);
    EXPECT_EQ(p->jobs[i].io.seed, 100u + i);
    EXPECT_EQ(p->jobs[i].io.read_percent, 70u);
    EXPECT_TRUE(p->job.writes);
  }
  j.set_size(0);  // to the end of the target
  p = BuildRunPlan(Ctx(j));
  EXPECT_EQ(p->jobs[2].io.region_len, 64 * kMiB - 5 * kMiB);
}

TEST(JobPlan, BudgetIsIoSizeRegionOrUnlimited) {
  v1::JobSpec j = Job(v1::READ);
  j.set_size(8 * kMiB);
  EXPECT_EQ(BuildRunPlan(Ctx(j))->jobs[0].io_budget, 8 * kMiB);
  j.set_io_size(32 * kMiB);
  EXPECT_EQ(BuildRunPlan(Ctx(j))->jobs[0].io_budget, 32 * kMiB);
  j.set_time_based(true);
  j.set_runtime_ns(1'000'000);
  EXPECT_EQ(BuildRunPlan(Ctx(j))->jobs[0].io_budget, std::numeric_limits<uint64_t>::max());
}

TEST(JobPlan, RejectsWhatCannotRun) {
  ExpectInvalid(Job(v1::RW_MODE_UNSPECIFIED), "rw");
  v1::JobSpec j = Job(v1::READ);
  j.set_numjobs(2);
  j.set_offset_increment(64 * kMiB);
  ExpectInvalid(j, "offset_increment");
  j = Job(v1::READ);
  j.set_offset(60 * kMiB);
  j.set_size(8 * kMiB);
  ExpectInvalid(j, "extends past the end");
  j = Job(v1::READ);
  j.set_size(1024);
  ExpectInvalid(j, "smaller than bs");
  // fio: "zoned_abs sizes exceed file size"; zones inside the 64 MiB region plan.
  j = Job(v1::RANDREAD);
  j.set_random_distribution("zoned_abs:50/32m:50/33m");
  ExpectInvalid(j, "the zoned_abs zones cover 68157440 bytes, more than its region of 67108864");
  j.set_random_distribution("zoned_abs:50/32m:50/32m");
  EXPECT_TRUE(BuildRunPlan(Ctx(j)).ok());
  j = Job(v1::READ, v1::PSYNC);
  j.set_fixedbufs(true);
  ExpectInvalid(j, "fixedbufs");
  j = Job(v1::READ);
  j.set_hipri(true);
  ExpectInvalid(j, "hipri");
  j = Job(v1::READ);
  j.set_time_based(true);
  ExpectInvalid(j, "time_based");
  j = Job(v1::READ);
  j.set_direct(true);
  j.set_bs(1000);
  ExpectInvalid(j, "bs");
  j.set_bs(4096);
  j.set_offset(100);
  ExpectInvalid(j, "offset");
  j = Job(v1::READ);
  j.set_cpus_allowed("0-x");
  ExpectInvalid(j, "cpus_allowed");
  j = Job(v1::READ);
  j.set_iodepth(65536);
  ExpectInvalid(j, "iodepth");
  j = Job(v1::RANDRW);
  j.set_rwmixread(101);
  ExpectInvalid(j, "rwmixread");
}

}  // namespace
}  // namespace blkbench
