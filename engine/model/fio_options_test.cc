// The engine with the fio options it models (issue 14): bssplit and bsrange sizes, and
// prio/prioclass on the requests; deterministic and plausible.
#include <cmath>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "common/testing/bssplit.h"
#include "engine/model/config.h"
#include "engine/model/engine.h"
#include "engine/model/engine_test_util.h"
#include "gtest/gtest.h"

namespace blkbench::engine {
namespace {

using test::Cell;
using test::Ios;
using test::RunCell;

double MeanBytes(const v1::RunResult& r) {
  return static_cast<double>(r.io().read_bytes() + r.io().write_bytes()) /
         static_cast<double>(Ios(r));
}

// Runs a bytes-limited cell on the engine to its end, its blktrace text into `out`.
void TraceUntilDone(const v1::CellSpec& cell, std::ostringstream& out) {
  absl::StatusOr<EngineConfig> config = DeriveConfig(cell);
  ASSERT_TRUE(config.ok()) << config.status();
  absl::StatusOr<std::unique_ptr<Engine>> e = Engine::Create(*config, 0);
  ASSERT_TRUE(e.ok()) << e.status();
  (*e)->set_trace_sink(&out);
  while (!(*e)->all_done() && !(*e)->stalled()) (*e)->RunUntil((*e)->now() + 10'000'000);
  ASSERT_TRUE((*e)->all_done());
}

TEST(EngineFioOptionsTest, BssplitSizesByShareDeterministically) {
  v1::CellSpec cell = Cell("ssd", v1::RANDREAD, 4096, 16, 2, 20'000'000);
  testing::AddBsSplit(cell.mutable_job()->mutable_bssplit(), {{4096, 50}, {65536, 50}});
  const v1::RunResult r = RunCell(cell);
  const double n = static_cast<double>(Ios(r));
  ASSERT_GT(n, 500);
  // Mean of a 50/50 mix of 4k and 64k: 34k; its standard deviation is 30k per I/O.
  EXPECT_NEAR(MeanBytes(r), 34816, 5 * 30720 / std::sqrt(n));
  const v1::RunResult again = RunCell(cell);
  EXPECT_EQ(again.io().read_bytes(), r.io().read_bytes());
  EXPECT_EQ(Ios(again), Ios(r));
  // Larger I/Os on the same SSD: fewer of them than all-4k, but more bytes.
  const v1::RunResult small = RunCell(Cell("ssd", v1::RANDREAD, 4096, 16, 2, 20'000'000));
  EXPECT_LT(n, static_cast<double>(Ios(small)));
  EXPECT_GT(r.io().read_bytes(), small.io().read_bytes());
}

// fio's per-direction sizes (cmdprio-bssplit.fio's bssplit=64k/40:1024k/60,1024k/100):
// reads average 0.4 * 64k + 0.6 * 1m, writes are all 1m.
TEST(EngineFioOptionsTest, PerDirectionBssplitSizesReadsAndWritesApart) {
  v1::CellSpec cell = Cell("ssd", v1::RANDRW, 4096, 16, 2, 50'000'000);
  v1::JobSpec* job = cell.mutable_job();
  job->set_rwmixread(50);
  testing::AddBsSplit(job->mutable_bssplit(), {{64 << 10, 40}, {1 << 20, 60}});
  testing::AddBsSplit(job->mutable_write_bssplit(), {{1 << 20, 100}});
  const v1::RunResult r = RunCell(cell);
  const double reads = static_cast<double>(r.io().read_ios());
  ASSERT_GT(reads, 100);
  ASSERT_GT(r.io().write_ios(), 100u);
  EXPECT_EQ(r.io().write_bytes(), r.io().write_ios() << 20);
  // Mean read: 655,360 bytes; a read's size deviates from it by 482k (0.49 of 960k).
  const double mean_read = static_cast<double>(r.io().read_bytes()) / reads;
  EXPECT_NEAR(mean_read, 655360, 5 * 481589 / std::sqrt(reads));
  const v1::RunResult again = RunCell(cell);
  EXPECT_EQ(again.io().read_bytes(), r.io().read_bytes());
  EXPECT_EQ(again.io().write_bytes(), r.io().write_bytes());
}

// fio blockalign: 512-byte reads on 4k boundaries (every issued sector a multiple of 8).
TEST(EngineFioOptionsTest, BlockalignPutsRandomOffsetsOnItsBoundary) {
  v1::CellSpec cell = Cell("null_blk", v1::RANDREAD, 512, 1, 1, 0);
  cell.mutable_job()->set_time_based(false);
  cell.mutable_job()->set_size(4 << 20);
  cell.mutable_job()->set_io_size(2000 * 512);
  cell.mutable_job()->set_blockalign(4096);
  std::ostringstream out;
  ASSERT_NO_FATAL_FAILURE(TraceUntilDone(cell, out));
  const std::regex issue(R"(^.* D +R (\d+) \+ 1 \[[^\]]+\]$)");
  std::set<uint64_t> blocks;
  uint64_t n = 0;
  std::istringstream in(out.str());
  for (std::string l; std::getline(in, l);) {
    std::smatch m;
    if (!std::regex_match(l, m, issue)) continue;
    const uint64_t sector = std::stoull(m[1]);
    ASSERT_EQ(sector % 8, 0u) << l;
    blocks.insert(sector / 8);
    ++n;
  }
  EXPECT_EQ(n, 2000u);
  EXPECT_GT(blocks.size(), 800u);  // spread over the 1024 4k blocks, not one spot
}

// bs=4k,64k: every read 4k, every write 64k.
TEST(EngineFioOptionsTest, PerDirectionBs) {
  v1::CellSpec cell = Cell("null_blk", v1::RANDRW, 4096, 8, 1, 5'000'000);
  cell.mutable_job()->set_rwmixread(50);
  cell.mutable_job()->set_write_bs(65536);
  const v1::RunResult r = RunCell(cell);
  ASSERT_GT(r.io().read_ios(), 100u);
  ASSERT_GT(r.io().write_ios(), 100u);
  EXPECT_EQ(r.io().read_bytes(), r.io().read_ios() * 4096);
  EXPECT_EQ(r.io().write_bytes(), r.io().write_ios() * 65536);
}

// fio's zoned random_distribution (jesd219's 50/5:30/15:20/80) over 10000 blocks: each
// zone's share of the issued requests (the blktrace D events; iodepth 1, so none merge)
// within five standard deviations of its declared share, and nothing outside the region.
TEST(EngineFioOptionsTest, ZonedSharesPerZone) {
  constexpr uint64_t kBlocks = 10000, kIos = 20000;
  v1::CellSpec cell = Cell("null_blk", v1::RANDREAD, 4096, 1, 1, 0);
  cell.mutable_job()->set_time_based(false);
  cell.mutable_job()->set_size(kBlocks * 4096);
  cell.mutable_job()->set_io_size(kIos * 4096);
  cell.mutable_job()->set_random_distribution("zoned:50/5:30/15:20/80");
  std::ostringstream out;
  ASSERT_NO_FATAL_FAILURE(TraceUntilDone(cell, out));
  const std::regex issue(R"(^.* D +R (\d+) \+ 8 \[[^\]]+\]$)");
  const uint64_t kEdges[] = {500, 2000, 10000};  // zone ends in blocks
  double hits[3] = {0, 0, 0};
  uint64_t n = 0;
  std::istringstream in(out.str());
  for (std::string l; std::getline(in, l);) {
    std::smatch m;
    if (!std::regex_match(l, m, issue)) continue;
    const uint64_t block = std::stoull(m[1]) / 8;
    ASSERT_LT(block, kBlocks) << l;
    int z = 0;
    while (block >= kEdges[z]) ++z;
    ++hits[z];
    ++n;
  }
  ASSERT_EQ(n, kIos);
  const double want[] = {0.5, 0.3, 0.2};
  for (int z = 0; z < 3; ++z) {
    const double bound = 5 * std::sqrt(want[z] * (1 - want[z]) / static_cast<double>(n));
    EXPECT_NEAR(hits[z] / static_cast<double>(n), want[z], bound) << "zone " << z;
  }
}

TEST(EngineFioOptionsTest, BsrangeMultiplesOfTheMinimum) {
  v1::CellSpec cell = Cell("ssd", v1::READ, 4096, 8, 1, 20'000'000);
  cell.mutable_job()->set_bs_max(16384);
  const v1::RunResult r = RunCell(cell);
  const double n = static_cast<double>(Ios(r));
  ASSERT_GT(n, 500);
  // Uniform over 4k, 8k, 12k, 16k: mean 10k, standard deviation ~4.6k.
  EXPECT_NEAR(MeanBytes(r), 10240, 5 * 4580 / std::sqrt(n));
  EXPECT_EQ(static_cast<uint64_t>(r.io().read_bytes()) % 4096, 0u);
}

// One job's class alone: every request in one mq-deadline level, so RT, BE and IDLE serve
// the same I/O (the levels matter between jobs of different classes).
TEST(EngineFioOptionsTest, PrioclassRunsDeterministically) {
  v1::CellSpec cell = Cell("ssd", v1::RANDREAD, 4096, 16, 1, 10'000'000);
  cell.mutable_queue()->set_scheduler("mq-deadline");
  const uint64_t be = Ios(RunCell(cell));
  ASSERT_GT(be, 0u);
  for (uint32_t cls : {1u, 3u}) {
    cell.mutable_job()->set_prioclass(cls);
    const v1::RunResult r = RunCell(cell);
    EXPECT_EQ(Ios(r), be) << cls;
    EXPECT_EQ(Ios(RunCell(cell)), Ios(r));
  }
}

// rate_iops on the model: the linear schedule allows at most 1 + cap * t I/Os; the device
// does ~100x more, so it reaches the cap. Poisson arrivals keep the mean (5 sigma).
TEST(EngineFioOptionsTest, RateIopsCapsTheSimulatedJob) {
  v1::CellSpec cell = Cell("null_blk", v1::RANDREAD, 4096, 8, 2, 200'000'000);
  cell.mutable_job()->set_rate_iops_read(5000);
  const v1::RunResult r = RunCell(cell);
  // Two jobs, each capped: 2 * 5000 * 0.2 s = 2000 I/Os.
  EXPECT_LE(Ios(r), 2u * (1 + 1000));
  EXPECT_GE(Ios(r), 2u * 990);
  EXPECT_EQ(Ios(RunCell(cell)), Ios(r));
  cell.mutable_job()->set_rate_process("poisson");
  const uint64_t poisson = Ios(RunCell(cell));
  EXPECT_NEAR(static_cast<double>(poisson), 2000, 5 * std::sqrt(2000.0));
  cell.mutable_job()->clear_rate_iops_read();
  cell.mutable_job()->set_rate_read_bps(8 << 20);  // 2048 IOPS of 4k per job
  EXPECT_NEAR(static_cast<double>(Ios(RunCell(cell))), 2 * 2048 * 0.2, 10);
}

// thinktime: each job stalls 100 us after every completion (QD capped at 1), so its IOPS
// is 1 / (latency + 100 us) < 10k; thinktime_blocks=4 at iodepth 4 thinks per 4.
TEST(EngineFioOptionsTest, ThinktimeAndStartdelay) {
  v1::CellSpec cell = Cell("null_blk", v1::RANDREAD, 4096, 8, 1, 100'000'000);
  const uint64_t free_running = Ios(RunCell(cell));
  cell.mutable_job()->set_thinktime_ns(100'000);
  const uint64_t thinking = Ios(RunCell(cell));
  EXPECT_LE(thinking, 1000u);  // 0.1 s / 100 us
  EXPECT_GE(thinking, 500u);
  EXPECT_GT(free_running, 20 * thinking);
  cell.mutable_job()->set_iodepth(4);
  cell.mutable_job()->set_thinktime_blocks(4);
  const uint64_t four = Ios(RunCell(cell));
  EXPECT_LE(four, 4000u);
  EXPECT_GT(four, 3 * thinking);
  // startdelay moves the job and its measured phase: the same I/O count, just later.
  v1::CellSpec delayed = Cell("ssd", v1::RANDREAD, 4096, 8, 1, 20'000'000);
  const uint64_t plain = Ios(RunCell(delayed));
  delayed.mutable_job()->set_startdelay_ns(50'000'000);
  const v1::RunResult late = RunCell(delayed);
  EXPECT_EQ(late.duration_ns(), 20'000'000u);
  EXPECT_NEAR(static_cast<double>(Ios(late)), static_cast<double>(plain), 0.02 * plain);
}

}  // namespace
}  // namespace blkbench::engine
