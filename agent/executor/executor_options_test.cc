// IoExecutor with the fio options of real job files (issue 14) on a real file in /dev/shm:
// bssplit's size mix, the random map's coverage, rate/rate_iops caps, thinktime, fsync
// counts, startdelay, nice and ioprio. Bounds are derived so that a loaded machine or a
// sanitizer build can only make a correct run slower, never fail it: every cap is far
// below what tmpfs does.
#include <cmath>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>

#include "agent/executor/executor.h"
#include "agent/executor/executor_test_util.h"
#include "common/testing/bssplit.h"
#include "common/testing/loop_device.h"
#include "gtest/gtest.h"

namespace blkbench {
namespace {

using exec_test::Execute;
using exec_test::Internal;
using exec_test::Job;
using exec_test::kMiB;
using exec_test::kMs;
using exec_test::Outcome;
using testing::TempFile;

class OptionsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<TempFile>> f = TempFile::Create(64 * kMiB);
    ASSERT_TRUE(f.ok()) << f.status();
    file_ = std::move(*f);
  }
  Outcome Go(const v1::JobSpec& j, uint32_t trace = 0) {
    return Execute(file_->path(), file_->size(), j, trace, std::chrono::seconds(1));
  }
  static double Iops(const v1::RunResult& r) {
    return static_cast<double>(r.io().read_ios() + r.io().write_ios()) / (r.duration_ns() / 1e9);
  }
  std::unique_ptr<TempFile> file_;
};

TEST_F(OptionsTest, BssplitMixAndBuffersForTheLargestSize) {
  for (v1::IoEngine engine : {v1::IO_URING, v1::PSYNC}) {
    SCOPED_TRACE(engine);
    v1::JobSpec j = Job(v1::RANDRW, engine, /*thread=*/true);
    j.clear_bs();
    testing::AddBsSplit(j.mutable_bssplit(), {{4096, 30}, {128 * 1024, 70}});
    j.set_io_size(96 * kMiB);
    constexpr uint32_t kTrace = 100'000;
    Outcome run = Go(j, kTrace);
    ASSERT_TRUE(run.result.ok()) << run.result.status();
    const std::vector<IoTrace>& ios = run.traces[0];
    ASSERT_GT(ios.size(), 500u);
    uint64_t n_small = 0, bytes = 0;
    for (const IoTrace& io : ios) {
      ASSERT_TRUE(io.len == 4096 || io.len == 128 * 1024) << io.len;
      ASSERT_EQ(io.offset % 4096, 0u);
      ASSERT_LE(io.offset + io.len, 64 * kMiB);
      n_small += io.len == 4096;
      bytes += io.len;
    }
    // Binomial share of 30 % over n I/Os: within 5 standard deviations.
    const double n = static_cast<double>(ios.size());
    EXPECT_NEAR(n_small / n, 0.30, 5 * std::sqrt(0.3 * 0.7 / n));
    const v1::RunResult& r = *run.result;
    EXPECT_EQ(r.io().read_bytes() + r.io().write_bytes(), bytes);
    EXPECT_GE(r.io().read_bytes() + r.io().write_bytes(), 96 * kMiB);
  }
}

// fio's per-direction sizes on real I/O (cmdprio-bssplit.fio's bssplit=64k/40:1m/60,1m/100
// scaled down): reads split 40/60 between 4k and 64k on 4k boundaries, every write 64k on
// 64k boundaries, and the result's bytes are the traced I/Os'.
TEST_F(OptionsTest, PerDirectionBssplitSizesReadsAndWritesApart) {
  for (v1::IoEngine engine : {v1::IO_URING, v1::PSYNC}) {
    SCOPED_TRACE(engine);
    v1::JobSpec j = Job(v1::RANDRW, engine, /*thread=*/true);
    j.clear_bs();
    testing::AddBsSplit(j.mutable_bssplit(), {{4096, 40}, {65536, 60}});
    testing::AddBsSplit(j.mutable_write_bssplit(), {{65536, 100}});
    j.set_io_size(64 * kMiB);
    constexpr uint32_t kTrace = 100'000;
    Outcome run = Go(j, kTrace);
    ASSERT_TRUE(run.result.ok()) << run.result.status();
    const std::vector<IoTrace>& ios = run.traces[0];
    ASSERT_GT(ios.size(), 500u);
    uint64_t reads = 0, small = 0, read_bytes = 0, write_bytes = 0;
    for (const IoTrace& io : ios) {
      ASSERT_LE(io.offset + io.len, 64 * kMiB);
      if (io.write) {
        ASSERT_EQ(io.len, 65536u);
        ASSERT_EQ(io.offset % 65536, 0u);
        write_bytes += io.len;
      } else {
        ASSERT_TRUE(io.len == 4096 || io.len == 65536) << io.len;
        ASSERT_EQ(io.offset % 4096, 0u);
        ++reads;
        small += io.len == 4096;
        read_bytes += io.len;
      }
    }
    const double n = static_cast<double>(reads);
    EXPECT_NEAR(static_cast<double>(small) / n, 0.40, 5 * std::sqrt(0.4 * 0.6 / n));
    EXPECT_EQ(run.result->io().read_bytes(), read_bytes);
    EXPECT_EQ(run.result->io().write_bytes(), write_bytes);
  }
}

// With the random map (fio's default) a pass over N blocks touches each exactly once;
// norandommap draws with replacement and misses about 1/e of them.
TEST_F(OptionsTest, RandomMapTouchesEachBlockOncePerPass) {
  v1::JobSpec j = Job(v1::RANDREAD, v1::IO_URING, true);
  j.set_size(4 * kMiB);  // 1024 blocks
  j.set_io_size(8 * kMiB);
  Outcome run = Go(j, 2048);
  ASSERT_TRUE(run.result.ok()) << run.result.status();
  const std::vector<IoTrace>& ios = run.traces[0];
  ASSERT_EQ(ios.size(), 2048u);
  for (int pass = 0; pass < 2; ++pass) {
    std::set<uint64_t> blocks;
    for (int i = 0; i < 1024; ++i) blocks.insert(ios[pass * 1024 + i].offset / 4096);
    EXPECT_EQ(blocks.size(), 1024u) << "pass " << pass;
  }
  j.set_norandommap(true);
  Outcome uniform = Go(j, 2048);
  ASSERT_TRUE(uniform.result.ok()) << uniform.result.status();
  std::set<uint64_t> blocks;
  for (int i = 0; i < 1024; ++i) blocks.insert(uniform.traces[0][i].offset / 4096);
  EXPECT_LT(blocks.size(), 720u);  // expected 1024 (1 - 1/e) = 647
}

// fio rate_iops / rate: the measured rate stays at the cap (the linear schedule issues at
// most one I/O per interval after the first) and, as the cap is ~1 % of what tmpfs does,
// well above half of it. Poisson arrivals keep the mean.
TEST_F(OptionsTest, RateIopsAndRateCapTheJob) {
  constexpr double kCap = 400;
  for (const char* process : {"linear", "poisson"}) {
    SCOPED_TRACE(process);
    v1::JobSpec j = Job(v1::RANDREAD, v1::IO_URING, true);
    j.set_rate_iops_read(static_cast<uint64_t>(kCap));
    j.set_rate_process(process);
    j.set_time_based(true);
    j.set_runtime_ns(1000 * kMs);
    Outcome run = Go(j);
    ASSERT_TRUE(run.result.ok()) << run.result.status();
    const double iops = Iops(*run.result);
    const double seconds = run.result->duration_ns() / 1e9;
    // linear: at most 1 + cap * t I/Os; poisson: the count is Poisson(cap * t), 5 sigma.
    const double slack = std::string(process) == "linear" ? 1 : 5 * std::sqrt(kCap * seconds);
    EXPECT_LE(iops, kCap + slack / seconds) << iops;
    EXPECT_GE(iops, kCap * 0.5) << iops;
  }
  v1::JobSpec b = Job(v1::RANDWRITE, v1::PSYNC, false);
  b.set_rate_write_bps(2 * kMiB);  // 512 IOPS of 4k
  b.set_time_based(true);
  b.set_runtime_ns(1000 * kMs);
  Outcome run = Go(b);
  ASSERT_TRUE(run.result.ok()) << run.result.status();
  const double bw = run.result->io().write_bytes() / (run.result->duration_ns() / 1e9);
  EXPECT_LE(bw, 2.0 * kMiB + 4096 / (run.result->duration_ns() / 1e9));
  EXPECT_GE(bw, 1.0 * kMiB);
}

// thinktime=2ms after every completion: at most 500 IOPS (each I/O also takes time), and
// at least a fifth of that when sleeps overshoot on a busy machine; without it tmpfs does
// far more. thinktime_blocks=4 at iodepth 4 thinks once per 4 completions: up to 2000.
TEST_F(OptionsTest, ThinktimeLowersIops) {
  v1::JobSpec j = Job(v1::RANDREAD, v1::IO_URING, true);
  j.set_time_based(true);
  j.set_runtime_ns(400 * kMs);
  Outcome fast = Go(j);
  ASSERT_TRUE(fast.result.ok()) << fast.result.status();
  j.set_thinktime_ns(2 * kMs);
  j.set_thinktime_spin_ns(kMs / 2);
  Outcome slow = Go(j);
  ASSERT_TRUE(slow.result.ok()) << slow.result.status();
  const double seconds = slow.result->duration_ns() / 1e9;
  EXPECT_LE(Iops(*slow.result), 500 + 1 / seconds);
  EXPECT_GE(Iops(*slow.result), 100);
  EXPECT_GT(Iops(*fast.result), 10 * Iops(*slow.result));
  EXPECT_EQ(Internal(*slow.result, "executor.max_inflight"), 1);  // it caps the depth
  j.set_iodepth(4);
  j.set_thinktime_blocks(4);
  Outcome blocks = Go(j);
  ASSERT_TRUE(blocks.result.ok()) << blocks.result.status();
  EXPECT_LE(Iops(*blocks.result), 2000 + 4 / seconds);
  EXPECT_GT(Iops(*blocks.result), 1.5 * Iops(*slow.result));
}

// fsync=32 over 256 writes: 8 syncs, one more with end_fsync; on every engine.
TEST_F(OptionsTest, FsyncEveryNWritesAndAtTheEnd) {
  for (v1::IoEngine engine : exec_test::AllEngines()) {
    SCOPED_TRACE(exec_test::EngineName(engine));
    v1::JobSpec j = Job(v1::RANDWRITE, engine, false);
    j.set_io_size(kMiB);
    j.set_fsync(32);
    Outcome run = Go(j);
    ASSERT_TRUE(run.result.ok()) << run.result.status();
    EXPECT_EQ(run.result->io().write_ios(), 256u);
    EXPECT_EQ(Internal(*run.result, "executor.fsyncs"), 8);
    j.set_end_fsync(true);
    Outcome end = Go(j);
    ASSERT_TRUE(end.result.ok()) << end.result.status();
    EXPECT_EQ(Internal(*end.result, "executor.fsyncs"), 9);
  }
  v1::JobSpec reads = Job(v1::RANDREAD, v1::PSYNC, false);
  reads.set_io_size(kMiB);
  reads.set_end_fsync(true);  // fio: only a job that writes syncs
  Outcome run = Go(reads);
  ASSERT_TRUE(run.result.ok()) << run.result.status();
  EXPECT_EQ(Internal(*run.result, "executor.fsyncs"), -1);
}

// startdelay: the job waits before its first I/O; the measured time excludes the wait.
TEST_F(OptionsTest, StartdelayDelaysTheJobNotTheMeasurement) {
  v1::JobSpec j = Job(v1::READ, v1::PSYNC, true);
  j.set_io_size(4 * kMiB);
  j.set_startdelay_ns(300 * kMs);
  Outcome run = Go(j);
  ASSERT_TRUE(run.result.ok()) << run.result.status();
  EXPECT_GE(run.wall, std::chrono::milliseconds(300));
  EXPECT_LT(run.result->duration_ns(), static_cast<uint64_t>(run.wall.count()) - 250 * kMs);
  EXPECT_EQ(run.result->io().read_ios(), 1024u);
}

// nice and prio/prioclass are applied to the job's thread or process (a failure would fail
// the run naming the option).
TEST_F(OptionsTest, NiceAndIoprioApply) {
  for (bool thread : {true, false}) {
    v1::JobSpec j = Job(v1::RANDREAD, v1::IO_URING, thread);
    j.set_io_size(kMiB);
    j.set_nice(5);
    j.set_prioclass(kIoprioClassBe);
    j.set_prio(7);
    Outcome run = Go(j);
    ASSERT_TRUE(run.result.ok()) << run.result.status();
    j.set_prioclass(kIoprioClassIdle);
    j.clear_prio();
    Outcome idle = Go(j);
    ASSERT_TRUE(idle.result.ok()) << idle.result.status();
  }
}

}  // namespace
}  // namespace blkbench
