// The same cell means the same job on a real device and on a simulated one: the
// executor's plan (agent/executor/job_plan.h) and the engine's configuration
// (engine/model/config.h) both come from ResolveJob (common/resolved_job.h), and agree
// field by field on a table of cells — and both refuse what the matrix parser refuses.
#include "absl/strings/str_cat.h"
#include "agent/executor/job_plan.h"
#include "common/resolved_job.h"
#include "engine/model/config.h"
#include "gtest/gtest.h"

namespace blkbench {
namespace {

struct Case {
  v1::RwMode rw;
  v1::IoEngine engine;
  uint32_t iodepth, numjobs, submit, min, max, rwmix;
  uint64_t bs;
};

v1::CellSpec CellOf(const Case& c) {
  v1::CellSpec cell;
  cell.mutable_target()->set_device_class("sim:ssd");
  v1::JobSpec& j = *cell.mutable_job();
  j.set_rw(c.rw);
  j.set_ioengine(c.engine);
  j.set_iodepth(c.iodepth);
  j.set_numjobs(c.numjobs);
  j.set_iodepth_batch_submit(c.submit);
  j.set_iodepth_batch_complete_min(c.min);
  j.set_iodepth_batch_complete_max(c.max);
  j.set_rwmixread(c.rwmix);
  j.set_bs(c.bs);
  j.set_time_based(true);
  j.set_runtime_ns(1'000'000'000);
  return cell;
}

TEST(JobConsistencyTest, ExecutorAndEngineResolveTheSameJob) {
  const Case cases[] = {
      {v1::RANDREAD, v1::IO_URING, 32, 4, 0, 1, 0, 50, 4096},
      {v1::RANDREAD, v1::IO_URING, 128, 1, 32, 32, 0, 50, 4096},
      {v1::RANDRW, v1::IO_URING, 16, 2, 4, 2, 8, 70, 65536},
      {v1::WRITE, v1::PSYNC, 32, 8, 1, 1, 0, 50, 131072},
      {v1::READ, v1::IO_ENGINE_UNSPECIFIED, 1, 1, 0, 1, 0, 50, 0},
      {v1::READWRITE, v1::IO_URING, 1, 16, 1, 1, 1, 0, 512},
      {v1::RANDREAD, v1::LIBAIO, 64, 2, 16, 4, 8, 50, 4096},
      {v1::RANDWRITE, v1::SYNC, 16, 1, 4, 2, 0, 50, 8192},
      {v1::RANDRW, v1::PVSYNC2, 8, 4, 0, 1, 0, 30, 4096},
  };
  for (const Case& c : cases) {
    const v1::CellSpec cell = CellOf(c);
    RunContext ctx;
    ctx.cell = cell;
    ctx.target_path = "/dev/null-for-planning";
    ctx.target_size = uint64_t{1} << 30;
    absl::StatusOr<RunPlan> plan = BuildRunPlan(ctx);
    absl::StatusOr<engine::EngineConfig> config = engine::DeriveConfig(cell);
    ASSERT_TRUE(plan.ok()) << plan.status();
    ASSERT_TRUE(config.ok()) << config.status();
    const JobPlan& p = plan->jobs[0];
    const ResolvedJob& r = plan->job;
    const engine::JobOptions& e = config->job;
    const std::string where = absl::StrCat("iodepth ", c.iodepth, " submit ", c.submit);
    EXPECT_EQ(plan->jobs.size(), static_cast<size_t>(e.numjobs)) << where;
    EXPECT_EQ(r.iodepth, static_cast<uint32_t>(e.iodepth)) << where;
    EXPECT_EQ(r.batch_submit, static_cast<uint32_t>(e.batch_submit)) << where;
    // The engine reaps at least one completion per wait (config.cc): min 0 behaves as 1.
    EXPECT_EQ(std::max(r.complete_min, 1u), e.complete_min) << where;
    EXPECT_EQ(r.complete_max, e.complete_max) << where;
    EXPECT_EQ(p.io.block_size, e.bs) << where;
    EXPECT_EQ(p.io.random, e.random) << where;
    EXPECT_EQ(p.io.read_percent, static_cast<uint32_t>(e.read_percent)) << where;
    // A sync engine (psync, sync, pvsync2) is the model's QD1 synchronous job.
    EXPECT_EQ((FindIoEngine(r.engine_name)->caps & kEngineSync) != 0, e.synchronous()) << where;
  }
}

TEST(JobConsistencyTest, BothRefuseWhatTheParserRefuses) {
  for (const Case& bad : {Case{v1::RANDREAD, v1::IO_URING, 40000, 1, 0, 1, 0, 50, 4096},
                          Case{v1::RANDREAD, v1::IO_URING, 8, 1, 16, 1, 0, 50, 4096},
                          Case{v1::RANDREAD, v1::PSYNC, 8, 1, 1, 1, 0, 50, 1000}}) {
    const v1::CellSpec cell = CellOf(bad);
    RunContext ctx;
    ctx.cell = cell;
    ctx.target_path = "/dev/null-for-planning";
    ctx.target_size = uint64_t{1} << 30;
    const std::string why = ResolveJobOrError(cell.job()).status().ToString();
    EXPECT_EQ(BuildRunPlan(ctx).status().code(), absl::StatusCode::kInvalidArgument) << why;
    EXPECT_EQ(engine::DeriveConfig(cell).status().code(), absl::StatusCode::kInvalidArgument)
        << why;
  }
}

}  // namespace
}  // namespace blkbench
