// Tests that a cell's scheduler tunables (QueueSettings.iosched, the matrix's fifo_batch,
// slice_idle, ...) reach the elevators and change what they do, as the sysfs files do.
#include <string>

#include "absl/strings/str_cat.h"
#include "engine/model/config.h"
#include "engine/model/engine_test_util.h"
#include "gtest/gtest.h"

namespace blkbench::engine {
namespace {

using test::Cell;
using test::In;
using test::Ios;
using test::RunCell;

void SetTunable(v1::CellSpec& cell, const std::string& name, const std::string& value) {
  (*cell.mutable_queue()->mutable_iosched())[name] = value;
}

// A sequential reader and a sequential writer far apart on a drive that takes one command
// at a time (no write cache), 16 deep each, under mq-deadline: both directions are queued
// in the elevator all the time, and it alone decides the order.
v1::CellSpec ReaderAndWriter() {
  v1::CellSpec cell = Cell("hdd", v1::READ, 4096, 16, 1, 1'000'000'000);
  cell.mutable_job()->set_direct(true);
  cell.mutable_queue()->set_scheduler("mq-deadline");
  (*cell.mutable_device_params())["hdd.queue_depth"] = "1";
  (*cell.mutable_device_params())["hdd.write_cache"] = "0";
  cell.mutable_queue()->set_max_sectors_kb(4);  // no merging: one request per 4k I/O
  cell.mutable_queue()->set_nr_requests(64);    // 2 x the device's depth would be 2
  v1::NamedJob& reader = *cell.add_jobs();
  reader.set_name("reader");
  *reader.mutable_job() = cell.job();
  v1::NamedJob& writer = *cell.add_jobs();
  writer.set_name("writer");
  *writer.mutable_job() = cell.job();
  writer.mutable_job()->set_rw(v1::WRITE);
  writer.mutable_job()->set_offset(uint64_t{256} << 30);
  return cell;
}

// fifo_batch is how many requests one direction gets in sector order before
// __dd_dispatch_request() chooses a direction again. At 16 the drive sees long
// sequential runs; at 1 every dispatch chooses again: two reads (writes_starved 2), then a
// write, so two issues in three jump between the reader's and the writer's regions.
TEST(IoschedTest, DeadlineFifoBatchSetsTheRunLength) {
  v1::CellSpec batched = ReaderAndWriter();
  SetTunable(batched, "fifo_batch", "16");
  v1::CellSpec single = ReaderAndWriter();
  SetTunable(single, "fifo_batch", "1");
  const v1::RunResult sixteen = RunCell(batched);
  const v1::RunResult one = RunCell(single);
  const v1::RunResult defaults = RunCell(ReaderAndWriter());
  EXPECT_GT(In(sixteen, "seq_ratio"), 0.85);
  EXPECT_LT(In(one, "seq_ratio"), 0.45);
  // Each switch is a seek between the two regions: a third fewer I/Os.
  EXPECT_GT(Ios(sixteen), Ios(one) * 13 / 10);
  // 16 is the kernel's default: the same run, event for event.
  EXPECT_EQ(In(sixteen, "engine.trace_hash"), In(defaults, "engine.trace_hash"));
}

// Seed 004's setting: four psync readers in one cgroup, started 200 ms apart so bfq
// keeps their queues apart, on 5.14, where one busy group makes bfq idle on each queue:
// one request at the drive at a time. slice_idle 0 is what users set before the 6.2
// rule existed: bfq never idles, and all four reach the drive.
v1::CellSpec SeparateReaders() {
  v1::CellSpec cell = Cell("ssd-seed004", v1::RANDREAD, 4096, 1, 1, 1'000'000'000);
  cell.mutable_job()->set_ioengine(v1::PSYNC);
  cell.mutable_job()->set_direct(true);
  cell.mutable_queue()->set_scheduler("bfq");
  cell.mutable_target()->set_kernel("sim:5.14");
  v1::CgroupLayout& one = *cell.mutable_cgroup_layout();
  one.set_kind(v1::CgroupLayout::ONE);
  one.add_groups()->set_jobs(4);
  one.mutable_groups(0)->set_name("one");
  for (int i = 0; i < 4; ++i) {
    v1::NamedJob& j = *cell.add_jobs();
    j.set_name(absl::StrCat("fio", i + 1));
    *j.mutable_job() = cell.job();
    j.mutable_job()->set_startdelay_ns(static_cast<uint64_t>(i) * 200'000'000);
  }
  return cell;
}

TEST(IoschedTest, BfqSliceIdleZeroRemovesSeed004sIdling) {
  const v1::RunResult idling = RunCell(SeparateReaders());
  v1::CellSpec no_idle = SeparateReaders();
  SetTunable(no_idle, "slice_idle", "0");
  const v1::RunResult zero = RunCell(no_idle);
  v1::CellSpec us = SeparateReaders();
  SetTunable(us, "slice_idle_us", "0");
  const v1::RunResult zero_us = RunCell(us);
  EXPECT_LT(In(idling, "device.inflight_mean"), 1.2);
  // Idling: dispatch returns nothing while the in-service queue waits for its next request.
  EXPECT_GT(In(idling, "elv.dispatch_null"), 1000);
  EXPECT_GT(In(zero, "device.inflight_mean"), 3.0);
  EXPECT_EQ(In(zero, "elv.dispatch_null"), 0);
  EXPECT_GT(Ios(zero), 2 * Ios(idling));
  EXPECT_EQ(In(zero, "engine.trace_hash"), In(zero_us, "engine.trace_hash"));
  // The patch (6.2's rule) gets there without touching the tunable.
  v1::CellSpec patched = SeparateReaders();
  patched.mutable_target()->set_kernel("sim:5.14+bfq-one-group-no-idle");
  EXPECT_GT(In(RunCell(patched), "device.inflight_mean"), 3.0);
}

// kyber's latency targets drive its depth timer (kyber_timer_fn): with writes missing a
// target of 1 ns the timer shrinks every domain whose p99 is good, and reads, whose 10 s
// target is always met, lose their tokens.
TEST(IoschedTest, KyberReadsItsLatencyTargets) {
  v1::CellSpec cell = Cell("ssd", v1::RANDRW, 4096, 32, 4, 1'000'000'000);
  cell.mutable_job()->set_rwmixread(50);
  cell.mutable_queue()->set_scheduler("kyber");
  const v1::RunResult defaults = RunCell(cell);
  SetTunable(cell, "read_lat_nsec", "10000000000");
  SetTunable(cell, "write_lat_nsec", "1");
  const v1::RunResult tight = RunCell(cell);
  EXPECT_LT(tight.io().read_ios(), defaults.io().read_ios() / 2);
  EXPECT_NE(In(tight, "engine.trace_hash"), In(defaults, "engine.trace_hash"));
}

// DeriveConfig refuses what validate refuses: another scheduler's tunable, one the kernel
// era lacks, a value out of range or one the engine does not model.
TEST(IoschedTest, DeriveConfigChecksTheTunables) {
  v1::CellSpec cell = Cell("ssd", v1::RANDREAD, 4096, 1, 1, 1'000'000);
  cell.mutable_queue()->set_scheduler("mq-deadline");
  SetTunable(cell, "fifo_batch", "1");
  EXPECT_TRUE(DeriveConfig(cell).ok());
  SetTunable(cell, "slice_idle", "0");
  EXPECT_FALSE(DeriveConfig(cell).ok());
  cell.mutable_queue()->mutable_iosched()->erase("slice_idle");
  SetTunable(cell, "fifo_batch", "-1");
  EXPECT_FALSE(DeriveConfig(cell).ok());
  SetTunable(cell, "fifo_batch", "1");
  cell.mutable_target()->set_kernel("sim:5.14");
  SetTunable(cell, "prio_aging_expire", "10");
  EXPECT_FALSE(DeriveConfig(cell).ok());
  v1::CellSpec bfq = Cell("ssd", v1::RANDREAD, 4096, 1, 1, 1'000'000);
  bfq.mutable_queue()->set_scheduler("bfq");
  SetTunable(bfq, "low_latency", "1");
  EXPECT_FALSE(DeriveConfig(bfq).ok());
}

}  // namespace
}  // namespace blkbench::engine
