// Tests of budget/requeue/restart, plug merging and the blktrace export.
#include <regex>
#include <sstream>
#include <string>

#include "common/blktrace.h"
#include "engine/model/config.h"
#include "engine/model/engine.h"
#include "engine/model/engine_runner.h"
#include "engine/model/engine_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace blkbench::engine {
namespace {

using test::In;
using test::Ios;
using test::RunCell;

// 4 KiB blocks unless a test says otherwise.
v1::CellSpec Cell(const std::string& kind, v1::RwMode rw, uint32_t iodepth, uint32_t numjobs,
                  uint64_t runtime_ns) {
  return test::Cell(kind, rw, 4096, iodepth, numjobs, runtime_ns);
}

// A SAS HBA with 256 host tags in front of a SATA disk with NCQ 32: 4 jobs x QD32 = 128
// requests want the disk, 32 get a budget, the rest wait on hctx->dispatch and are
// re-run by completions (SCHED_RESTART).
TEST(DispatchTest, BudgetShortageRequeuesAndRestarts) {
  v1::CellSpec cell = Cell("hdd", v1::RANDREAD, 32, 4, 4'000'000'000);
  cell.mutable_job()->set_ramp_time_ns(400'000'000);
  const v1::RunResult tags_bound = RunCell(cell);  // AHCI: 32 tags = 32 budgets
  (*cell.mutable_device_params())["engine.can_queue"] = "256";
  const v1::RunResult budget_bound = RunCell(cell);
  EXPECT_EQ(In(tags_bound, "dispatch.requeues"), 0);
  EXPECT_GT(In(tags_bound, "tags.waits"), 0);
  EXPECT_GT(In(budget_bound, "dispatch.requeues"), 100);
  EXPECT_GT(In(budget_bound, "dispatch.restarts"), 100);
  EXPECT_EQ(In(budget_bound, "tags.waits"), 0);
  // The disk sees at most 32 either way: the same throughput.
  EXPECT_NEAR(budget_bound.iops() / tags_bound.iops(), 1.0, 0.1);
  // Every I/O waits in the block layer or the disk: 128 in flight, Little's law holds.
  const double inflight = In(budget_bound, "inflight.mean");
  EXPECT_NEAR(inflight, 128, 2);
  EXPECT_NEAR(budget_bound.iops() * budget_bound.lat_summary().mean_ns() * 1e-9 / inflight, 1.0,
              0.03);
}

TEST(DispatchTest, RequeuedRequestsAllComplete) {
  v1::CellSpec cell = Cell("hdd", v1::RANDWRITE, 64, 2, 0);
  (*cell.mutable_device_params())["engine.can_queue"] = "128";
  cell.mutable_job()->set_time_based(false);
  cell.mutable_job()->set_size(uint64_t{1} << 30);  // random: no plug merges
  cell.mutable_job()->set_io_size(300 * 4096);
  cell.mutable_job()->set_iodepth_batch_submit(8);
  const v1::RunResult r = RunCell(cell);
  EXPECT_EQ(Ios(r), 600u);
  EXPECT_EQ(In(r, "dispatch.requests"), 600);
  EXPECT_GT(In(r, "dispatch.requeues"), 0);
  EXPECT_GT(In(r, "dispatch.restarts"), 0);
}

TEST(DispatchTest, NoBudgetOnNvmeOrNullBlk) {
  for (const char* kind : {"ssd", "null_blk"}) {
    v1::CellSpec cell = Cell(kind, v1::RANDREAD, 64, 4, 2'000'000);
    (*cell.mutable_device_params())["engine.can_queue"] = "4096";  // ignored: no budget
    const v1::RunResult r = RunCell(cell);
    EXPECT_GT(Ios(r), 100u) << kind;
    EXPECT_EQ(In(r, "dispatch.requeues"), 0) << kind;
    EXPECT_EQ(In(r, "dispatch.restarts"), 0) << kind;
  }
}

TEST(DispatchTest, BadCanQueue) {
  v1::CellSpec cell = Cell("hdd", v1::RANDREAD, 1, 1, 1'000'000);
  (*cell.mutable_device_params())["engine.can_queue"] = "x";
  EXPECT_EQ(DeriveConfig(cell).status().code(), absl::StatusCode::kInvalidArgument);
}

// io_uring submits 8 sequential 4k writes under one plug: each bio back-merges into the
// previous request (blk_attempt_plug_merge), so one 32k request per batch.
TEST(PlugMergeTest, SequentialBatchMergesRandomDoesNot) {
  v1::CellSpec cell = Cell("ssd", v1::WRITE, 8, 1, 20'000'000);
  cell.mutable_job()->set_iodepth_batch_submit(8);
  cell.mutable_job()->set_iodepth_batch_complete_min(8);
  const v1::RunResult seq = RunCell(cell);
  ASSERT_GT(Ios(seq), 100u);
  EXPECT_NEAR(In(seq, "dispatch.requests") / static_cast<double>(Ios(seq)), 1.0 / 8, 0.01);
  EXPECT_NEAR(In(seq, "merges.plug") / static_cast<double>(Ios(seq)), 7.0 / 8, 0.01);
  EXPECT_GT(In(seq, "seq_ratio"), 0.95);  // of dispatched (merged) requests
  cell.mutable_job()->set_rw(v1::RANDWRITE);
  const v1::RunResult rnd = RunCell(cell);
  EXPECT_EQ(In(rnd, "merges.plug"), 0);
  // Dispatched within the window = completed, give or take the requests in flight.
  EXPECT_NEAR(In(rnd, "dispatch.requests"), static_cast<double>(Ios(rnd)), 8);
}

// Merges stop at max_sectors; unplugged submissions (batch of 1) never merge.
TEST(PlugMergeTest, BoundedByMaxSectorsAndNeedsAPlug) {
  v1::CellSpec cell = Cell("ssd", v1::WRITE, 32, 1, 20'000'000);
  cell.mutable_job()->set_iodepth_batch_submit(32);
  cell.mutable_job()->set_iodepth_batch_complete_min(32);
  cell.mutable_queue()->set_max_sectors_kb(16);  // 4 bios per request
  const v1::RunResult r = RunCell(cell);
  ASSERT_GT(Ios(r), 100u);
  EXPECT_NEAR(In(r, "dispatch.requests") / static_cast<double>(Ios(r)), 1.0 / 4, 0.01);
  cell.mutable_job()->set_iodepth_batch_submit(1);
  cell.mutable_job()->set_iodepth_batch_complete_min(1);
  EXPECT_EQ(In(RunCell(cell), "merges.plug"), 0);
}

// Split fronts carry REQ_NOMERGE: 64k sequential bios split at 32k never merge.
TEST(PlugMergeTest, SplitFrontsDoNotMerge) {
  v1::CellSpec cell = Cell("ssd", v1::WRITE, 8, 1, 20'000'000);
  cell.mutable_job()->set_bs(64 * 1024);
  cell.mutable_job()->set_iodepth_batch_submit(8);
  cell.mutable_queue()->set_max_sectors_kb(32);
  const v1::RunResult r = RunCell(cell);
  ASSERT_GT(Ios(r), 10u);
  EXPECT_EQ(In(r, "merges.plug"), 0);
  EXPECT_NEAR(In(r, "dispatch.requests"), 2 * static_cast<double>(Ios(r)), 16);
}

// A finished run traced from the start: every line parses, and D and C balance.
TEST(BlktraceTest, EngineTraceHasMatchingIssueAndComplete) {
  for (const char* kind : {"hdd", "null_blk"}) {
    v1::CellSpec cell = Cell(kind, v1::RANDREAD, 16, 2, 0);
    (*cell.mutable_device_params())["engine.can_queue"] = "64";
    cell.mutable_job()->set_time_based(false);
    cell.mutable_job()->set_size(uint64_t{1} << 30);
    cell.mutable_job()->set_io_size(100 * 4096);
    cell.mutable_job()->set_iodepth_batch_submit(4);
    absl::StatusOr<EngineConfig> config = DeriveConfig(cell);
    ASSERT_TRUE(config.ok()) << config.status();
    absl::StatusOr<std::unique_ptr<Engine>> e = Engine::Create(*config, 0);
    ASSERT_TRUE(e.ok()) << e.status();
    std::ostringstream out;
    (*e)->set_trace_sink(&out);
    while (!(*e)->all_done() && !(*e)->stalled()) (*e)->RunUntil((*e)->now() + 10'000'000);
    ASSERT_TRUE((*e)->all_done()) << kind;
    const std::regex line(
        R"(^ *\d+,\d+ +\d+ +\d+ +\d+\.\d{9} +\d+ +([DC]) +(R|WS) \d+ \+ \d+ \[[^\]]+\]$)");
    std::istringstream in(out.str());
    std::string l;
    int d = 0, c = 0;
    while (std::getline(in, l)) {
      std::smatch m;
      ASSERT_TRUE(std::regex_match(l, m, line)) << l;
      (m[1] == "D" ? d : c)++;
    }
    EXPECT_EQ(d, 200) << kind;
    EXPECT_EQ(c, d) << kind;
    EXPECT_EQ((*e)->trace_events_written(), static_cast<uint64_t>(d + c));
  }
}

TEST(BlktraceTest, TracingDoesNotChangeTheRunAndRespectsTheLimit) {
  v1::CellSpec cell = Cell("hdd", v1::RANDREAD, 32, 2, 0);
  (*cell.mutable_device_params())["engine.can_queue"] = "64";
  cell.mutable_job()->set_time_based(false);
  cell.mutable_job()->set_size(uint64_t{1} << 30);
  cell.mutable_job()->set_io_size(50 * 4096);
  absl::StatusOr<EngineConfig> config = DeriveConfig(cell);
  ASSERT_TRUE(config.ok());
  uint64_t hash[2] = {0, 0};
  for (int traced = 0; traced < 2; ++traced) {
    auto e = *Engine::Create(*config, 0);
    std::ostringstream out;
    if (traced) e->set_trace_sink(&out, 10);
    while (!e->all_done() && !e->stalled()) e->RunUntil(e->now() + 10'000'000);
    hash[traced] = e->trace_hash();
    if (traced) {
      EXPECT_EQ(e->trace_events_written(), 10u);
    }
  }
  EXPECT_EQ(hash[0], hash[1]);
}

}  // namespace
}  // namespace blkbench::engine

namespace blkbench::engine {
namespace {

// A single-vector (SCSI-like) disk interrupts CPU 0. With rq_affinity 1 the job on CPU 1
// (same L3) completes there, the job on CPU 8 (other CCD) gets an IPI; rq_affinity 2
// always sends one, 0 never does. NVMe-like devices complete where they were issued.
TEST(CompletionCpuTest, IpiWhenTheSubmitterDoesNotShareTheCache) {
  auto run = [](const std::string& kind, const std::string& cpus, const std::string& affinity) {
    v1::CellSpec cell = Cell(kind, v1::RANDREAD, 8, 2, kind == "hdd" ? 2'000'000'000 : 2'000'000);
    cell.mutable_job()->set_cpus_allowed(cpus);
    (*cell.mutable_device_params())["engine.rq_affinity"] = affinity;
    return RunCell(cell);
  };
  const v1::RunResult same_ccx = run("hdd", "0,1", "1");
  const v1::RunResult other_ccd = run("hdd", "0,8", "1");
  const v1::RunResult forced = run("hdd", "0,1", "2");
  const v1::RunResult at_irq = run("hdd", "0,8", "0");
  const double half = static_cast<double>(Ios(same_ccx)) / 2;
  EXPECT_EQ(In(same_ccx, "completion.ipis"), 0);
  EXPECT_NEAR(In(same_ccx, "completion.remote"), half, 0.2 * half);
  EXPECT_NEAR(In(other_ccd, "completion.ipis"), Ios(other_ccd) / 2.0, 0.1 * half);
  EXPECT_EQ(In(other_ccd, "completion.remote"), 0);
  EXPECT_NEAR(In(forced, "completion.ipis"), Ios(forced) / 2.0, 0.1 * half);
  EXPECT_EQ(In(at_irq, "completion.ipis"), 0);
  EXPECT_NEAR(In(at_irq, "completion.remote"), Ios(at_irq) / 2.0, 0.1 * half);
  // The IPI costs the interrupted CPU a line transfer per I/O on top of the completion.
  EXPECT_GT(In(other_ccd, "cpu_ns_per_io.completion"), In(same_ccx, "cpu_ns_per_io.completion"));
  const v1::RunResult nvme = run("ssd", "0,8", "2");
  EXPECT_EQ(In(nvme, "completion.ipis") + In(nvme, "completion.remote"), 0);
}

TEST(CompletionCpuTest, BadParams) {
  v1::CellSpec cell = Cell("hdd", v1::RANDREAD, 1, 1, 1'000'000);
  (*cell.mutable_device_params())["engine.rq_affinity"] = "3";
  EXPECT_EQ(DeriveConfig(cell).status().code(), absl::StatusCode::kInvalidArgument);
  (*cell.mutable_device_params())["engine.rq_affinity"] = "1";
  (*cell.mutable_device_params())["engine.irq_cpu"] = "999";
  RunContext ctx;
  ctx.cell = cell;
  EXPECT_EQ(NewEngineRunner()->Run(ctx).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace blkbench::engine
