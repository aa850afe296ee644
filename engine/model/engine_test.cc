// End-to-end tests of the blk-mq model through the Runner: determinism, Little's law on
// every device kind, null_blk irqmodes, plug flushes, splitting, batch tag allocation and
// HDD sequential vs random.
#include <atomic>
#include <cmath>
#include <string>
#include <vector>

#include "engine/model/engine_runner.h"
#include "engine/model/engine_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace blkbench::engine {
namespace {

using test::Cell;
using test::In;
using test::Ios;
using test::RunCell;

void Param(v1::CellSpec* cell, const std::string& key, const std::string& value) {
  (*cell->mutable_device_params())[key] = value;
}

TEST(EngineTest, DeterministicTraceHash) {
  v1::CellSpec cell = Cell("ssd", v1::RANDREAD, 4096, 16, 4, 5'000'000);
  cell.mutable_job()->set_iodepth_batch_submit(4);
  const v1::RunResult a = RunCell(cell);
  const v1::RunResult b = RunCell(cell);
  EXPECT_GT(Ios(a), 1000u);
  EXPECT_EQ(In(a, "engine.trace_hash"), In(b, "engine.trace_hash"));
  EXPECT_EQ(Ios(a), Ios(b));
  EXPECT_EQ(a.lat().sum_ns(), b.lat().sum_ns());
  cell.mutable_job()->set_randseed(42);
  const v1::RunResult c = RunCell(cell);
  EXPECT_NE(In(a, "engine.trace_hash"), In(c, "engine.trace_hash"));
}

TEST(EngineTest, SampleIntervalDoesNotChangeTheTrace) {
  RunContext ctx;
  ctx.cell = Cell("hdd", v1::RANDREAD, 4096, 8, 2, 200'000'000);
  ctx.cell.mutable_job()->set_ramp_time_ns(30'000'000);
  ctx.sample_interval = std::chrono::milliseconds(7);
  absl::StatusOr<v1::RunResult> a = NewEngineRunner()->Run(ctx);
  ctx.sample_interval = std::chrono::seconds(1);
  absl::StatusOr<v1::RunResult> b = NewEngineRunner()->Run(ctx);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->internals().at("engine.trace_hash"), b->internals().at("engine.trace_hash"));
  EXPECT_EQ(Ios(*a), Ios(*b));
}

TEST(EngineTest, ResultShapeAndSamples) {
  v1::CellSpec cell = Cell("null_blk", v1::RANDREAD, 4096, 8, 2, 20'000'000);
  std::vector<v1::Sample> samples;
  const v1::RunResult r = RunCell(cell, &samples);
  EXPECT_EQ(r.runner(), "engine");
  EXPECT_EQ(r.duration_ns(), 20'000'000u);
  ASSERT_EQ(samples.size(), 4u);
  uint64_t sum = 0;
  for (size_t i = 0; i < samples.size(); ++i) {
    EXPECT_EQ(samples[i].seq(), i + 1);
    EXPECT_EQ(samples[i].offset_ns(), (i + 1) * 5'000'000);
    sum += samples[i].io().read_ios();
  }
  EXPECT_EQ(sum, Ios(r));
  EXPECT_EQ(r.lat().count(), Ios(r));
  EXPECT_GT(r.sys_cpu_ns(), 0u);
  EXPECT_GT(In(r, "cpu_ns_per_io.submit"), 0);
  EXPECT_NEAR(r.iops(), Ios(r) / 0.02, 1);
}

TEST(EngineTest, CancelReturnsCancelled) {
  RunContext ctx;
  ctx.cell = Cell("null_blk", v1::RANDREAD, 4096, 8, 2, 1'000'000'000);
  std::atomic<bool> cancel{true};
  ctx.cancel = &cancel;
  EXPECT_EQ(NewEngineRunner()->Run(ctx).status().code(), absl::StatusCode::kCancelled);
}

TEST(EngineTest, UnknownDeviceAndElevatorErrors) {
  RunContext ctx;
  ctx.cell = Cell("floppy", v1::RANDREAD, 4096, 1, 1, 1'000'000);
  EXPECT_EQ(NewEngineRunner()->Run(ctx).status().code(), absl::StatusCode::kInvalidArgument);
  ctx.cell = Cell("null_blk", v1::RANDREAD, 4096, 1, 1, 1'000'000);
  ctx.cell.mutable_queue()->set_scheduler("cfq");
  EXPECT_EQ(NewEngineRunner()->Run(ctx).status().code(), absl::StatusCode::kInvalidArgument);
}

// Little's law: mean in-flight (time-average, measured independently) = IOPS x mean
// latency, on every device kind.
TEST(EngineTest, LittlesLawOnEveryDevice) {
  struct Case {
    std::string kind;
    uint64_t runtime_ns;
  };
  for (const Case& c : std::vector<Case>{{"null_blk", 5'000'000},
                                         {"ssd", 20'000'000},
                                         {"ssd-sata", 20'000'000},
                                         {"optane", 10'000'000},
                                         {"hdd", 10'000'000'000}}) {
    // A ramp of a tenth of the run keeps the start-up transient out of the window.
    v1::CellSpec cell = Cell(c.kind, v1::RANDREAD, 4096, 16, 2, c.runtime_ns);
    cell.mutable_job()->set_iodepth_batch_submit(4);
    cell.mutable_job()->set_ramp_time_ns(c.runtime_ns / 10);
    const v1::RunResult r = RunCell(cell);
    const double little = r.iops() * r.lat_summary().mean_ns() * 1e-9;
    const double inflight = In(r, "inflight.mean");
    EXPECT_GT(Ios(r), 300u) << c.kind;
    EXPECT_NEAR(little / inflight, 1.0, 0.03)
        << c.kind << " iops " << r.iops() << " lat " << r.lat_summary().mean_ns() << " inflight "
        << inflight;
  }
}

TEST(EngineTest, NullBlkTimerCompletionAddsLatency) {
  v1::CellSpec cell = Cell("null_blk", v1::RANDREAD, 4096, 1, 1, 5'000'000);
  Param(&cell, "null_blk.irqmode", "0");
  const v1::RunResult inline_done = RunCell(cell);
  Param(&cell, "null_blk.irqmode", "2");
  Param(&cell, "null_blk.completion_nsec", "50000");
  const v1::RunResult timer = RunCell(cell);
  const double inline_lat = inline_done.lat_summary().mean_ns();
  EXPECT_LT(inline_lat, 2'000);  // CPU only
  EXPECT_NEAR(timer.lat_summary().mean_ns() - inline_lat, 50'000, 1'000);
  EXPECT_GT(inline_done.iops(), 10 * timer.iops());
}

// io_uring submits 48 under one plug (nr_ios capped at 32): blk_add_rq_to_plug flushes
// when the 33rd request arrives, blk_finish_plug flushes the other 16.
TEST(EngineTest, PlugFlushesAtBlkMaxRequestCount) {
  v1::CellSpec cell = Cell("null_blk", v1::RANDREAD, 4096, 48, 1, 0);
  Param(&cell, "null_blk.hw_queue_depth", "1024");  // 64-bit words: a 32-tag window fits
  Param(&cell, "null_blk.irqmode", "2");
  Param(&cell, "null_blk.completion_nsec", "1000000");
  v1::JobSpec& j = *cell.mutable_job();
  j.set_time_based(false);
  j.set_size(uint64_t{1} << 30);  // random offsets far apart: no plug merges
  j.set_io_size(48 * 4096);
  j.set_iodepth_batch_submit(48);
  j.set_iodepth_batch_complete_min(48);
  const v1::RunResult r = RunCell(cell);
  EXPECT_EQ(Ios(r), 48u);
  EXPECT_EQ(In(r, "plug.flushes"), 2);
  EXPECT_EQ(In(r, "tags.batch_requested"), 32);
  EXPECT_GT(In(r, "tags.batch_obtained"), 0);
  // nr_ios = 1 after the batch: everything else is a single-tag allocation.
  EXPECT_EQ(In(r, "tags.single_allocs"), 48 - In(r, "tags.batch_obtained"));
}

// With 16-bit words (64 tags) a 32-tag window never fits: __sbitmap_queue_get_batch()
// fails and every request allocates one tag.
TEST(EngineTest, BatchWiderThanWordFallsBackToSingleTags) {
  v1::CellSpec cell = Cell("null_blk", v1::RANDREAD, 4096, 32, 1, 0);
  v1::JobSpec& j = *cell.mutable_job();
  j.set_time_based(false);
  j.set_size(uint64_t{1} << 30);
  j.set_io_size(32 * 4096);
  j.set_iodepth_batch_submit(32);
  const v1::RunResult r = RunCell(cell);
  EXPECT_EQ(In(r, "tags.batch_obtained"), 0);
  EXPECT_EQ(In(r, "tags.single_allocs"), 32);
}

TEST(EngineTest, BioSplitIntoMaxSectorsPieces) {
  v1::CellSpec cell = Cell("ssd", v1::RANDWRITE, 512 * 1024, 4, 1, 20'000'000);
  cell.mutable_queue()->set_max_sectors_kb(128);
  const v1::RunResult r = RunCell(cell);
  ASSERT_GT(Ios(r), 10u);
  EXPECT_NEAR(In(r, "split.pieces") / static_cast<double>(Ios(r)), 4.0, 0.2);
  EXPECT_NEAR(In(r, "dispatch.requests") / static_cast<double>(Ios(r)), 4.0, 0.2);
}

// Seed 004: 1023 tags fragmented by out-of-order completions; a single-pass batch gets
// fewer than nr_ios = 32 tags and the rest of the plug allocates one tag at a time.
// plug-batch-retry (6.19 multi-pass) fills the batch.
TEST(EngineTest, BatchRetryReducesSingleTagAllocations) {
  v1::CellSpec cell = Cell("ssd", v1::RANDREAD, 4096, 128, 1, 20'000'000);
  Param(&cell, "ssd.queue_depth", "1023");
  cell.mutable_job()->set_iodepth_batch_submit(32);
  cell.mutable_job()->set_iodepth_batch_complete_min(32);
  cell.mutable_target()->set_kernel("sim:6.16");
  const v1::RunResult single = RunCell(cell);
  cell.mutable_target()->set_kernel("sim:6.16+plug-batch-retry");
  const v1::RunResult multi = RunCell(cell);
  ASSERT_GT(In(single, "tags.batch_allocs"), 10);
  EXPECT_GT(In(single, "tags.single_allocs"), 0.05 * static_cast<double>(Ios(single)));
  EXPECT_LT(In(single, "tags.batch_obtained"), In(single, "tags.batch_requested"));
  EXPECT_LT(In(multi, "tags.single_allocs") / static_cast<double>(Ios(multi)),
            0.5 * In(single, "tags.single_allocs") / static_cast<double>(Ios(single)));
}

TEST(EngineTest, HddSequentialFarFasterThanRandom) {
  const v1::RunResult seq = RunCell(Cell("hdd", v1::READ, 4096, 4, 1, 200'000'000));
  const v1::RunResult rnd = RunCell(Cell("hdd", v1::RANDREAD, 4096, 4, 1, 200'000'000));
  EXPECT_GT(In(seq, "seq_ratio"), 0.9);
  EXPECT_LT(In(rnd, "seq_ratio"), 0.05);
  EXPECT_GT(seq.iops(), 20 * rnd.iops());
}

TEST(EngineTest, TagExhaustionSleepsAndWakes) {
  v1::CellSpec cell = Cell("null_blk", v1::RANDREAD, 4096, 32, 8, 5'000'000);
  Param(&cell, "null_blk.irqmode", "2");
  Param(&cell, "null_blk.completion_nsec", "20000");
  const v1::RunResult r = RunCell(cell);  // 256 I/Os want 64 tags
  EXPECT_GT(In(r, "tags.waits"), 0);
  EXPECT_GT(In(r, "tags.wakeups"), 0);
  // A job blocked in blk_mq_get_tag() submits nothing more (v0 has no io-wq punt):
  // 64 requests at the device plus about one sleeping bio per job.
  EXPECT_NEAR(In(r, "inflight.mean"), 64 + 8, 4);
  // 64 tags x 20 us: about 3.2M IOPS ceiling.
  EXPECT_NEAR(r.iops(), 64 / 20e-6, 0.1 * 64 / 20e-6);
}

}  // namespace
}  // namespace blkbench::engine
