// The elevator path of the blk-mq model: scheduler tags, the elevator lock sites, the
// dispatch loop and the seed patches' mechanisms (000 batch dispatch, 002 serialized
// dispatch and insertion lists).
#include <string>

#include "absl/strings/str_cat.h"
#include "engine/model/engine_test_util.h"
#include "engine/model/issue_order.h"
#include "gtest/gtest.h"

namespace blkbench::engine {
namespace {

using test::Cell;
using test::In;
using test::Ios;
using test::RunCell;

// Seed 000's setup, scaled down: null_blk irqmode 0 with 128 queues on the 4-node
// server, 4k randwrite QD32 batch 8.
v1::CellSpec Seed000(const std::string& kernel, uint32_t numjobs) {
  v1::CellSpec cell = Cell("null_blk", v1::RANDWRITE, 4096, 32, numjobs, 20'000'000);
  cell.mutable_job()->set_iodepth_batch_submit(8);
  cell.mutable_job()->set_iodepth_batch_complete_min(8);
  cell.mutable_queue()->set_scheduler("mq-deadline");
  cell.mutable_target()->set_kernel(kernel);
  cell.mutable_target()->set_machine("server-128-4node");
  auto& p = *cell.mutable_device_params();
  p["null_blk.submit_queues"] = "128";
  p["null_blk.hw_queue_depth"] = "1024";
  p["null_blk.irqmode"] = "0";
  p["null_blk.completion_nsec"] = "0";
  return cell;
}

// Seed 002's setup: 32 threads x QD4 512 B randread, one queue, on the desktop.
v1::CellSpec Seed002(const std::string& kernel) {
  v1::CellSpec cell = Cell("null_blk", v1::RANDREAD, 512, 4, 32, 20'000'000);
  cell.mutable_job()->set_iodepth_batch_submit(4);
  cell.mutable_job()->set_iodepth_batch_complete_min(4);
  cell.mutable_job()->set_thread(true);
  cell.mutable_queue()->set_scheduler("mq-deadline");
  cell.mutable_target()->set_kernel(kernel);
  cell.mutable_target()->set_machine("desktop-16");
  auto& p = *cell.mutable_device_params();
  p["null_blk.irqmode"] = "0";
  p["null_blk.completion_nsec"] = "0";
  return cell;
}

TEST(SchedTest, SchedTagsDefaultToTwiceTheQueueDepthCappedAt128) {
  v1::CellSpec cell = Cell("null_blk", v1::RANDREAD, 4096, 8, 1, 2'000'000);
  cell.mutable_queue()->set_scheduler("mq-deadline");
  v1::RunResult r = RunCell(cell);  // null_blk default hw_queue_depth 64
  EXPECT_EQ(In(r, "sched.tags"), 128);
  EXPECT_EQ(In(r, "driver.tags"), 64);
  cell.mutable_device_params()->insert({"null_blk.hw_queue_depth", "1024"});
  EXPECT_EQ(In(RunCell(cell), "sched.tags"), 256);
  cell.mutable_queue()->set_nr_requests(32);
  r = RunCell(cell);
  EXPECT_EQ(In(r, "sched.tags"), 32);
  EXPECT_EQ(In(r, "driver.tags"), 1024);
  cell.mutable_queue()->set_scheduler("none");
  EXPECT_EQ(In(RunCell(cell), "sched.tags"), 0);
}

// blk_mq_get_tags() refuses batches when limit_depth set a shallow depth: mq-deadline
// limits everything but sync reads, so writes never batch-allocate and reads do.
TEST(SchedTest, DeadlineNeverBatchAllocatesWrites) {
  v1::CellSpec cell = Cell("null_blk", v1::RANDWRITE, 4096, 32, 2, 5'000'000);
  cell.mutable_job()->set_iodepth_batch_submit(8);
  cell.mutable_queue()->set_scheduler("mq-deadline");
  v1::RunResult writes = RunCell(cell);
  EXPECT_GT(Ios(writes), 1000u);
  EXPECT_EQ(In(writes, "tags.batch_allocs"), 0);
  cell.mutable_job()->set_rw(v1::RANDREAD);
  v1::RunResult reads = RunCell(cell);
  EXPECT_GT(In(reads, "tags.batch_allocs"), 0);
}

// Every I/O takes dd->lock in bio_merge and in dispatch, and each plug batch once in
// insert: 2 + 1/8 acquisitions per I/O (plus wasted dispatches that find nothing).
TEST(SchedTest, DeadlineLockSitesPerIo) {
  v1::RunResult r = RunCell(Seed000("sim:6.16", 2));
  EXPECT_GT(Ios(r), 1000u);
  EXPECT_NEAR(In(r, "lock.dd_lock.acquisitions_per_io"), 2.125, 0.15);
  EXPECT_NEAR(In(r, "elv.dispatch_calls") / static_cast<double>(Ios(r)), 1.0, 0.1);
}

// Seed 000: taking dd->lock once for up to 8 dispatch_request calls cuts the lock
// acquisitions per I/O and raises IOPS when 16 submitters contend.
TEST(SchedTest, BatchDispatchRelievesTheDeadlineLock) {
  const v1::RunResult base = RunCell(Seed000("sim:6.16", 16));
  const v1::RunResult batch = RunCell(Seed000("sim:6.16+dd-batch-dispatch", 16));
  EXPECT_GT(In(base, "lock.dd_lock.contended_share"), 0.9);
  EXPECT_LT(In(batch, "lock.dd_lock.acquisitions_per_io"),
            In(base, "lock.dd_lock.acquisitions_per_io") - 0.5);
  EXPECT_GT(batch.iops(), 1.2 * base.iops());
  EXPECT_LT(In(batch, "cpu_ns_per_io.lock_spin"), In(base, "cpu_ns_per_io.lock_spin"));
}

// Seed 002: with DD_DISPATCHING a dispatcher that finds dispatch in progress returns
// nothing without the lock; contention and spin time fall and IOPS rise.
TEST(SchedTest, SerializedDispatchCutsContention) {
  const v1::RunResult base = RunCell(Seed002("sim:6.8"));
  const v1::RunResult ser = RunCell(Seed002("sim:6.8+dd-serialize-dispatch"));
  EXPECT_EQ(In(base, "elv.dispatch_skipped"), 0);
  EXPECT_GT(In(ser, "elv.dispatch_skipped"), 0);
  EXPECT_LT(In(ser, "lock.dd_lock.contended_share"), In(base, "lock.dd_lock.contended_share"));
  EXPECT_LT(In(ser, "cpu_ns_per_io.lock_spin"), 0.5 * In(base, "cpu_ns_per_io.lock_spin"));
  EXPECT_GT(ser.iops(), 1.3 * base.iops());
}

// dd-insert-lists moves insertion to its own lock: dd->lock is no longer taken per
// insert batch, and the insertion lock is nearly uncontended.
TEST(SchedTest, InsertListsMoveInsertionOffTheDeadlineLock) {
  const v1::RunResult r = RunCell(Seed002("sim:6.8+dd-serialize-dispatch+dd-insert-lists"));
  EXPECT_NEAR(In(r, "lock.dd_insert_lock.acquisitions_per_io"), 0.25, 0.05);
  EXPECT_LT(In(r, "lock.dd_insert_lock.contended_share"), 0.2);
}

// The per-call-site split of dd->lock adds up to the lock's totals, and names the sites
// the kernel takes it from: bio_merge once per I/O, dispatch once per request, insert
// once per plug batch of 4.
TEST(SchedTest, LockSitesAddUpToTheLock) {
  const v1::RunResult r = RunCell(Seed002("sim:6.8"));
  double takes = 0;
  double spin = 0;
  for (const char* site : {"merge", "insert", "dispatch", "completion", "other"}) {
    const std::string p = absl::StrCat("lock.dd_lock.site.", site, ".");
    if (r.internals().contains(p + "acquisitions_per_io")) {
      takes += In(r, p + "acquisitions_per_io");
      spin += In(r, p + "spin_ns_per_io");
    }
  }
  EXPECT_NEAR(takes, In(r, "lock.dd_lock.acquisitions_per_io"), 1e-9);
  EXPECT_NEAR(spin, In(r, "lock.dd_lock.spin_ns_per_io"), 1e-6 * spin);
  EXPECT_NEAR(In(r, "lock.dd_lock.site.merge.acquisitions_per_io"), 1.0, 0.05);
  EXPECT_NEAR(In(r, "lock.dd_lock.site.dispatch.acquisitions_per_io"), 1.0, 0.05);
  EXPECT_NEAR(In(r, "lock.dd_lock.site.insert.acquisitions_per_io"), 0.25, 0.05);
}

// Seed 002's thread: separate insertion and dispatch locks (dd-insert-lists alone) take
// insertion off dd->lock but leave dispatch spinning against itself; serializing dispatch
// is what removes the dispatch site's spin (Jens Axboe's answer to Bart Van Assche).
TEST(SchedTest, SplitLocksAloneLeaveDispatchCompetingWithItself) {
  const v1::RunResult base = RunCell(Seed002("sim:6.8"));
  const v1::RunResult split = RunCell(Seed002("sim:6.8+dd-insert-lists"));
  const v1::RunResult ser = RunCell(Seed002("sim:6.8+dd-serialize-dispatch"));
  const std::string dispatch_spin = "lock.dd_lock.site.dispatch.spin_ns_per_io";
  EXPECT_FALSE(split.internals().contains("lock.dd_lock.site.insert.acquisitions_per_io"));
  EXPECT_GT(In(split, "lock.dd_lock.contended_share"), 0.9);
  EXPECT_GT(In(split, dispatch_spin), 0.8 * In(base, dispatch_spin));
  EXPECT_LT(In(ser, dispatch_spin), 0.2 * In(base, dispatch_spin));
  EXPECT_GT(ser.iops(), 1.3 * split.iops());
}

// Ming Lei's question on seed 000 (examples/seeds/threads/000-merges-*.yaml): sequential
// writers whose bios reach the elevator one at a time merge into requests still waiting
// in mq-deadline's sort tree when the HDD's slots are full (most bios, not a handful);
// batch dispatch cannot take requests out sooner than slots free up, so it leaves the
// merges and the bandwidth where they were.
TEST(SchedTest, SequentialWritersMergeInTheElevatorBeforeAndAfterBatchDispatch) {
  auto cell = [](const std::string& kernel) {
    v1::CellSpec c = Cell("hdd", v1::WRITE, 4096, 32, 4, 200'000'000);
    c.mutable_job()->set_direct(true);
    c.mutable_job()->set_offset_increment(uint64_t{1} << 30);
    c.mutable_queue()->set_scheduler("mq-deadline");
    c.mutable_target()->set_kernel(kernel);
    c.mutable_target()->set_machine("desktop-16");
    return c;
  };
  const v1::RunResult base = RunCell(cell("sim:6.16"));
  const v1::RunResult batch = RunCell(cell("sim:6.16+dd-batch-dispatch"));
  for (const v1::RunResult* r : {&base, &batch}) {
    EXPECT_EQ(In(*r, "merges.plug"), 0);
    EXPECT_GT(In(*r, "elv.bio_merges"), 0.5 * static_cast<double>(Ios(*r)));
  }
  EXPECT_GE(In(batch, "elv.bio_merges") / static_cast<double>(Ios(batch)),
            0.9 * In(base, "elv.bio_merges") / static_cast<double>(Ios(base)));
  EXPECT_NEAR(batch.bw_bytes_per_sec() / base.bw_bytes_per_sec(), 1.0, 0.05);
}

TEST(SchedTest, ElevatorRunsAreDeterministic) {
  v1::CellSpec cell = Seed002("sim:6.8+dd-serialize-dispatch");
  cell.mutable_job()->set_randseed(7);
  const v1::RunResult a = RunCell(cell);
  const v1::RunResult b = RunCell(cell);
  EXPECT_EQ(In(a, "engine.trace_hash"), In(b, "engine.trace_hash"));
  EXPECT_EQ(Ios(a), Ios(b));
  cell.mutable_job()->set_randseed(8);
  EXPECT_NE(In(RunCell(cell), "engine.trace_hash"), In(a, "engine.trace_hash"));
}

// A slow device behind a per-LUN budget with an elevator: every request still ends
// (no stall), budgets and driver tags fail and re-run the queue through SCHED_RESTART.
TEST(SchedTest, DeadlineOnHddWithBudgetCompletes) {
  v1::CellSpec cell = Cell("hdd", v1::RANDWRITE, 4096, 16, 4, 1'000'000'000);
  cell.mutable_queue()->set_scheduler("mq-deadline");
  const v1::RunResult r = RunCell(cell);
  EXPECT_GT(Ios(r), 100u);
  EXPECT_GT(In(r, "dispatch.budget_fails") + In(r, "dispatch.requeues"), 0);
}

// A cell with explicit cgroups: one job per group, with the given weights.
v1::CellSpec Groups(v1::CellSpec cell, std::initializer_list<uint32_t> weights) {
  v1::CgroupLayout& l = *cell.mutable_cgroup_layout();
  l.set_kind(v1::CgroupLayout::GROUPS);
  int i = 0;
  for (const uint32_t w : weights) {
    v1::CgroupGroup& g = *l.add_groups();
    g.set_name("g" + std::to_string(i++));
    g.set_weight(w);
    g.set_jobs(1);
  }
  cell.mutable_job()->set_numjobs(static_cast<uint32_t>(weights.size()));
  return cell;
}

// bfq's B-WF2Q+ between groups: two backlogged groups with io.bfq.weight 1000 and 100
// share the device about 10:1.
TEST(SchedTest, BfqGroupWeightsShareTheDevice) {
  v1::CellSpec cell = Cell("ssd", v1::RANDREAD, 4096, 16, 2, 300'000'000);
  cell.mutable_queue()->set_scheduler("bfq");
  const v1::RunResult r = RunCell(Groups(cell, {1000, 100}));
  const double heavy = In(r, "cgroup.1.ios");
  const double light = In(r, "cgroup.2.ios");
  ASSERT_GT(light, 0);
  EXPECT_NEAR(heavy / light, 10.0, 3.0);
  // Equal weights: equal shares.
  const v1::RunResult eq = RunCell(Groups(cell, {500, 500}));
  EXPECT_NEAR(In(eq, "cgroup.1.ios") / In(eq, "cgroup.2.ios"), 1.0, 0.15);
}

// Yu Kuai's example: handed out 1-2-3-4, issued 1-3-2-4: one inverted pair (2, 3).
TEST(IssueOrderTest, CountsThePairsIssuedAgainstTheHandOutOrder) {
  const auto pairs = [](std::initializer_list<uint64_t> issued, uint64_t withdrawn = 0) {
    IssueOrder order;
    for (uint64_t s = 1; s <= issued.size() + (withdrawn ? 1 : 0); ++s) order.HandedOut(s);
    if (withdrawn) order.Withdrawn(withdrawn);
    uint64_t n = 0;
    for (const uint64_t s : issued) n += order.Issued(s);
    EXPECT_EQ(order.pending(), 0u);
    return n;
  };
  EXPECT_EQ(pairs({1, 3, 2, 4}), 1u);
  EXPECT_EQ(pairs({1, 2, 3, 4}), 0u);
  EXPECT_EQ(pairs({5, 4, 3, 2, 1}), 10u);  // n(n-1)/2: every pair
  // Two dispatchers issuing interleaved batches of two: 1 3 2 4 5 7 6 8.
  EXPECT_EQ(pairs({1, 3, 2, 4, 5, 7, 6, 8}), 2u);
  // A request handed out again under a new number does not count under the old one.
  EXPECT_EQ(pairs({1, 3, 4}, 2), 0u);
  IssueOrder order;
  order.HandedOut(1);
  EXPECT_EQ(order.Issued(2), 0u);  // never handed out: not counted
}

// One submitter at queue depth 1 on one CPU: nothing can overtake, so no pair is
// inverted; several dispatchers on several CPUs invert some.
TEST(SchedTest, InvertedPairsAreZeroWithOneRequestInFlight) {
  v1::CellSpec cell = Cell("null_blk", v1::RANDREAD, 4096, 1, 1, 2'000'000);
  cell.mutable_queue()->set_scheduler("mq-deadline");
  const v1::RunResult one = RunCell(cell);
  EXPECT_GT(Ios(one), 1000u);
  EXPECT_EQ(In(one, "dispatch.inverted_pairs_per_io"), 0);
  EXPECT_EQ(In(one, "dispatch.hctx_in_order_ratio"), 1.0);
}

// Seed 000's claim about order, with a known answer: dispatchers that take one request
// per lock hold interleave their takes, so a hardware queue's list skips the numbers the
// other CPUs took; batch dispatch takes 8 under one hold, and 7 of each 8 follow their
// predecessor.
TEST(SchedTest, BatchDispatchKeepsEachQueuesListInElevatorOrder) {
  const double before = In(RunCell(Seed000("sim:6.16", 16)), "dispatch.hctx_in_order_ratio");
  const double after =
      In(RunCell(Seed000("sim:6.16+dd-batch-dispatch", 16)), "dispatch.hctx_in_order_ratio");
  EXPECT_LT(before, 0.1);
  EXPECT_NEAR(after, 7.0 / 8.0, 0.03);
}

// Seed 004's setup: psync random readers in one cgroup on 5.14, where one busy group
// makes bfq idle on each queue it serves.
v1::CellSpec OneGroupReaders(uint32_t numjobs) {
  v1::CellSpec cell = Cell("ssd-seed004", v1::RANDREAD, 4096, 1, numjobs, 300'000'000);
  cell.mutable_job()->set_ioengine(v1::PSYNC);
  cell.mutable_job()->set_direct(true);
  cell.mutable_queue()->set_scheduler("bfq");
  cell.mutable_target()->set_kernel("sim:5.14");
  v1::CgroupLayout& one = *cell.mutable_cgroup_layout();  // cgroup: one, as the parser writes it
  one.set_kind(v1::CgroupLayout::ONE);
  one.add_groups()->set_jobs(4);
  one.mutable_groups(0)->set_name("one");
  return cell;
}

// One fio's numjobs clones start together, so bfq's stable merge (5.13+) puts their queues
// into one and nothing idles between them: all four readers' requests reach the drive.
// The same four as separate invocations, started 200 ms apart (more than
// bfq_burst_interval), keep their own queues, and bfq idles on each in turn: one request
// at the drive. Threads behave as processes (a pthread has its own io context without
// CLONE_IO). Seed 004's "fio -numjobs=1/2/4/8 gives the same result with or without this
// patch" is the first case.
TEST(SchedTest, BfqStablyMergesJobsStartedTogetherNotOnesStartedApart) {
  for (const bool thread : {false, true}) {
    SCOPED_TRACE(thread ? "threads" : "processes");
    v1::CellSpec together = OneGroupReaders(4);
    together.mutable_job()->set_thread(thread);
    const v1::RunResult merged = RunCell(together);
    EXPECT_GT(In(merged, "device.inflight_mean"), 3.0);

    v1::CellSpec apart = OneGroupReaders(1);
    apart.mutable_job()->set_thread(thread);
    for (int i = 0; i < 4; ++i) {
      v1::NamedJob& j = *apart.add_jobs();
      j.set_name(absl::StrCat("fio", i));
      *j.mutable_job() = apart.job();
      j.mutable_job()->set_startdelay_ns(static_cast<uint64_t>(i) * 200'000'000);
    }
    const v1::RunResult separate = RunCell(apart);
    EXPECT_LT(In(separate, "device.inflight_mean"), 1.2);
    EXPECT_GT(Ios(merged), 2 * Ios(separate));
  }
}

// bfqd->lock is taken on every completion as well, and once per request inserted
// (bfq_insert_request), where mq-deadline takes dd->lock once per plug batch of 8
// (dd_insert_requests): about four takes per I/O against two and a quarter.
TEST(SchedTest, BfqTakesItsLockOnCompletionAndPerInsertedRequest) {
  const v1::RunResult dd = RunCell(Seed000("sim:6.16", 2));
  v1::CellSpec cell = Seed000("sim:6.16", 2);
  cell.mutable_queue()->set_scheduler("bfq");
  const v1::RunResult bfq = RunCell(cell);
  EXPECT_NEAR(In(bfq, "lock.bfqd_lock.site.completion.acquisitions_per_io"), 1.0, 0.05);
  EXPECT_NEAR(In(bfq, "lock.bfqd_lock.site.insert.acquisitions_per_io"), 1.0, 0.05);
  EXPECT_NEAR(In(dd, "lock.dd_lock.site.insert.acquisitions_per_io"), 0.125, 0.02);
  EXPECT_NEAR(In(bfq, "lock.bfqd_lock.acquisitions_per_io"), 4.0, 0.3);
}

// What a contended take costs depends on its call site: the lines it touches that another
// CPU wrote (LockSiteLines). mq-deadline's dispatch touches more than its bio_merge, so
// its holds are longer; a batch of dispatches under one hold costs more than one but
// less than one take per request.
TEST(SchedTest, ContendedHoldsFollowTheLinesEachSiteTouches) {
  const v1::RunResult base = RunCell(Seed000("sim:6.16", 16));
  const v1::RunResult batched = RunCell(Seed000("sim:6.16+dd-batch-dispatch", 16));
  const double merge = In(base, "lock.dd_lock.site.merge.hold_ns_per_acquisition");
  const double dispatch = In(base, "lock.dd_lock.site.dispatch.hold_ns_per_acquisition");
  EXPECT_GT(dispatch, merge);
  const double batch = In(batched, "lock.dd_lock.site.dispatch.hold_ns_per_acquisition");
  const double per_take = In(batched, "lock.dd_lock.site.dispatch.acquisitions_per_io");
  EXPECT_GT(batch, 1.5 * dispatch);
  EXPECT_LT(batch * per_take,
            dispatch * In(base, "lock.dd_lock.site.dispatch.acquisitions_per_io"));
}

// kyber has no global lock (per-ctx lists, per-hctx dispatch) and a 100 ms stats timer:
// on a fast SSD it costs nothing visible against "none".
TEST(SchedTest, KyberHasNoGlobalLockAndRunsItsTimer) {
  v1::CellSpec cell = Cell("ssd", v1::RANDREAD, 4096, 32, 4, 300'000'000);
  const v1::RunResult none = RunCell(cell);
  cell.mutable_queue()->set_scheduler("kyber");
  const v1::RunResult kyber = RunCell(cell);
  EXPECT_EQ(kyber.internals().count("lock.dd_lock.acquisitions_per_io"), 0u);
  EXPECT_EQ(kyber.internals().count("lock.bfqd_lock.acquisitions_per_io"), 0u);
  EXPECT_GE(In(kyber, "elv.timer_fires"), 2);
  EXPECT_NEAR(kyber.iops() / none.iops(), 1.0, 0.05);
}

}  // namespace
}  // namespace blkbench::engine
