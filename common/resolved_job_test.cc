// ResolveJob against fio's documented defaults and fixups (fio's HOWTO and init.c
// fixup_options) and the engines' limits, as a table; IsSimulated and CellForRepeat.
#include "common/resolved_job.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace blkbench {
namespace {

using ::testing::HasSubstr;

v1::JobSpec Job(v1::IoEngine engine, uint32_t iodepth) {
  v1::JobSpec j;
  j.set_rw(v1::RANDREAD);
  j.set_ioengine(engine);
  j.set_iodepth(iodepth);
  return j;
}

TEST(ResolveJobTest, ZeroValuesTakeFiosDefaults) {
  v1::JobSpec j;
  j.set_rw(v1::READ);
  const JobResolution r = ResolveJob(j);
  ASSERT_TRUE(r.problems.empty());
  EXPECT_EQ(r.job.engine, IoEngineKind::kPsync);  // fio's default ioengine
  EXPECT_EQ(r.job.bs, 4096u);
  EXPECT_EQ(r.job.iodepth, 1u);
  EXPECT_EQ(r.job.numjobs, 1u);
  EXPECT_EQ(r.job.read_percent, 100u);
  EXPECT_FALSE(r.job.random);
}

struct BatchCase {
  uint32_t iodepth, submit, min, max;  // as written (0 = unset)
  uint32_t want_submit, want_min, want_max;
};

TEST(ResolveJobTest, BatchSettingsFollowFixupOptions) {
  const BatchCase cases[] = {
      {32, 0, 1, 0, 32, 1, 1},  // submit 0 = iodepth; complete_max 0 = complete_min
      {32, 8, 4, 0, 8, 4, 4},   // complete_max 0 = complete_min
      {32, 8, 0, 0, 8, 0, 1},   // complete_min 0 (poll), complete_max at least 1
      {32, 32, 32, 32, 32, 32, 32}, {1, 1, 1, 1, 1, 1, 1},
  };
  for (const BatchCase& c : cases) {
    v1::JobSpec j = Job(v1::IO_URING, c.iodepth);
    j.set_iodepth_batch_submit(c.submit);
    j.set_iodepth_batch_complete_min(c.min);
    j.set_iodepth_batch_complete_max(c.max);
    const JobResolution r = ResolveJob(j);
    ASSERT_TRUE(r.problems.empty()) << r.problems[0].message;
    EXPECT_EQ(r.job.batch_submit, c.want_submit) << c.iodepth << "/" << c.submit;
    EXPECT_EQ(r.job.complete_min, c.want_min) << c.iodepth << "/" << c.min;
    EXPECT_EQ(r.job.complete_max, c.want_max) << c.iodepth << "/" << c.max;
  }
}

TEST(ResolveJobTest, ImpossibleBatchesAreProblemsNotSilentClamps) {
  v1::JobSpec j = Job(v1::IO_URING, 8);
  j.set_iodepth_batch_submit(16);
  const JobResolution r = ResolveJob(j);
  ASSERT_EQ(r.problems.size(), 1u);
  EXPECT_EQ(r.problems[0].keys.front(), "iodepth_batch_submit");
  EXPECT_THAT(r.problems[0].message, HasSubstr("larger than iodepth (8)"));
  j.set_iodepth_batch_submit(0);
  j.set_iodepth_batch_complete_min(4);
  j.set_iodepth_batch_complete_max(2);
  EXPECT_EQ(ResolveJob(j).problems.at(0).keys.front(), "iodepth_batch_complete_min");
}

TEST(ResolveJobTest, EngineLimits) {
  // io_uring: the ring has iodepth entries, at most IORING_MAX_ENTRIES.
  const JobResolution deep = ResolveJob(Job(v1::IO_URING, 40000));
  ASSERT_EQ(deep.problems.size(), 1u);
  EXPECT_EQ(deep.problems[0].keys.front(), "iodepth");
  EXPECT_THAT(deep.problems[0].message, HasSubstr("32768"));
  EXPECT_TRUE(ResolveJob(Job(v1::IO_URING, 32768)).problems.empty());
  // psync: one I/O in flight whatever iodepth says; io_uring-only switches are problems.
  v1::JobSpec sync = Job(v1::PSYNC, 40000);
  const JobResolution s = ResolveJob(sync);
  EXPECT_TRUE(s.problems.empty());
  EXPECT_EQ(s.job.iodepth, 1u);
  EXPECT_EQ(s.job.batch_submit, 1u);
  sync.set_fixedbufs(true);
  sync.set_hipri(true);
  const JobResolution bad = ResolveJob(sync);
  ASSERT_EQ(bad.problems.size(), 3u);  // fixedbufs, hipri with psync, hipri without direct
  EXPECT_EQ(bad.problems[0].keys.front(), "hipri");
  EXPECT_EQ(bad.problems[2].keys.front(), "hipri");
  EXPECT_THAT(bad.problems[2].message, HasSubstr("direct=1"));
  EXPECT_EQ(ResolveJob(Job(v1::IO_URING, 70000)).problems.at(0).message,
            "iodepth 70000 is above the limit of 65536");
}

TEST(ResolveJobTest, EveryEngineHasItsLimitsAndSwitches) {
  // The vocabulary: names and proto values both ways; unset is psync.
  for (const IoEngineInfo& e : IoEngines()) {
    EXPECT_EQ(FindIoEngine(e.name), &e);
    EXPECT_EQ(FindIoEngine(e.proto), &e);
  }
  EXPECT_EQ(FindIoEngine(v1::IO_ENGINE_UNSPECIFIED)->name, "psync");
  EXPECT_EQ(FindIoEngine("posixaio"), nullptr);
  EXPECT_EQ(IoEngineNames(), "io_uring, libaio, psync, sync, pvsync2, nop");
  // fio's name for the no-op engine finds it too (imported job files).
  EXPECT_EQ(FindIoEngine("null"), FindIoEngine(v1::NOP));
  EXPECT_EQ(FindIoEngine("null")->name, "nop");

  // libaio: asynchronous at the asked depth; no io_uring switches, no polling.
  v1::JobSpec aio = Job(v1::LIBAIO, 128);
  aio.set_iodepth_batch_submit(32);
  JobResolution r = ResolveJob(aio);
  ASSERT_TRUE(r.problems.empty());
  EXPECT_EQ(r.job.engine, IoEngineKind::kLibaio);
  EXPECT_EQ(r.job.engine_name, "libaio");
  EXPECT_EQ(r.job.iodepth, 128u);
  EXPECT_EQ(r.job.batch_submit, 32u);
  EXPECT_TRUE(ResolveJob(Job(v1::LIBAIO, 40000)).problems.empty());  // no ring limit
  aio.set_fixedbufs(true);
  aio.set_direct(true);
  aio.set_hipri(true);
  r = ResolveJob(aio);
  ASSERT_EQ(r.problems.size(), 2u);
  EXPECT_EQ(r.problems[0].message,
            "hipri is not an option of ioengine libaio; it needs one of io_uring, pvsync2");
  EXPECT_EQ(r.problems[1].message, "fixedbufs is an io_uring option; it needs ioengine: io_uring");

  // sync and pvsync2: one I/O in flight whatever iodepth says (fio caps it with a note).
  for (v1::IoEngine e : {v1::SYNC, v1::PVSYNC2}) {
    v1::JobSpec j = Job(e, 64);
    j.set_iodepth_batch_submit(16);
    j.set_iodepth_batch_complete_min(8);
    r = ResolveJob(j);
    ASSERT_TRUE(r.problems.empty()) << r.problems[0].message;
    EXPECT_EQ(r.job.iodepth, 1u);
    EXPECT_EQ(r.job.batch_submit, 1u);
    EXPECT_EQ(r.job.complete_min, 1u);
    EXPECT_EQ(r.job.complete_max, 1u);
    EXPECT_NE(r.job.engine_caps & kEngineSync, 0u);
  }
  // pvsync2 takes hipri (RWF_HIPRI), with direct=1 like every polled engine.
  v1::JobSpec pv = Job(v1::PVSYNC2, 1);
  pv.set_hipri(true);
  EXPECT_EQ(ResolveJob(pv).problems.at(0).keys.front(), "hipri");
  EXPECT_THAT(ResolveJob(pv).problems.at(0).message, HasSubstr("direct=1"));
  pv.set_direct(true);
  EXPECT_TRUE(ResolveJob(pv).problems.empty());
  // nop: asynchronous at the asked depth, no switches; only real devices run it.
  v1::JobSpec nop = Job(v1::NOP, 256);
  nop.set_iodepth_batch_complete_min(8);
  r = ResolveJob(nop);
  ASSERT_TRUE(r.problems.empty());
  EXPECT_EQ(r.job.engine, IoEngineKind::kNop);
  EXPECT_EQ(r.job.iodepth, 256u);
  EXPECT_EQ(r.job.complete_min, 8u);
  EXPECT_EQ(SimulatedJobProblem(r.job),
            "ioengine nop issues no I/O, so a simulated device has nothing to time; it runs on "
            "real devices only");
  EXPECT_EQ(SimulatedJobProblem(ResolveJob(aio).job), "");
  nop.set_sqthread_poll(true);
  EXPECT_EQ(ResolveJob(nop).problems.at(0).keys.front(), "sqthread_poll");
  v1::JobSpec bad = Job(v1::PSYNC, 1);
  bad.set_ioengine(static_cast<v1::IoEngine>(99));
  EXPECT_EQ(ResolveJob(bad).problems.at(0).keys.front(), "ioengine");
}

TEST(ResolveJobTest, MixedModesAndSizes) {
  v1::JobSpec j = Job(v1::IO_URING, 4);
  j.set_rw(v1::RANDRW);
  j.set_rwmixread(70);
  EXPECT_EQ(ResolveJob(j).job.read_percent, 70u);
  j.set_rw(v1::RANDWRITE);
  EXPECT_EQ(ResolveJob(j).job.read_percent, 0u);
  j.set_bs(1000);
  EXPECT_EQ(ResolveJob(j).problems.at(0).keys.front(), "bs");
  j.set_bs(4096);
  j.set_size(2048);
  EXPECT_EQ(ResolveJob(j).problems.at(0).keys.front(), "size");
  j.set_size(0);
  j.set_time_based(true);
  EXPECT_EQ(ResolveJob(j).problems.at(0).keys.front(), "runtime");
  j.set_rw(v1::RW_MODE_UNSPECIFIED);
  j.set_runtime_ns(1);
  EXPECT_EQ(ResolveJob(j).problems.at(0).keys.front(), "rw");
  auto error = ResolveJobOrError(j);
  EXPECT_EQ(error.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(error.status().message()), HasSubstr("job option rw: "));
}

TEST(ResolveJobTest, SimulatedNamesAndRepeats) {
  EXPECT_TRUE(IsSimulated("sim:ssd"));
  EXPECT_TRUE(IsSimulated("sim:6.16+dd-batch-dispatch"));
  EXPECT_FALSE(IsSimulated("ssd"));
  EXPECT_FALSE(IsSimulated("simulated"));
  EXPECT_FALSE(IsSimulated(""));
  v1::CellSpec cell;
  cell.mutable_job()->set_randseed(0x89);
  EXPECT_EQ(CellForRepeat(cell, 0).job().randseed(), 0x89u);
  EXPECT_EQ(CellForRepeat(cell, 3).job().randseed(), 0x89u + 3);
}

}  // namespace
}  // namespace blkbench
