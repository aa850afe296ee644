// The seed examples (examples/seeds/*.yaml), parsed by the matrix parser and run on the
// engine at a reduced runtime: each seed's published result must keep its direction.
// docs/seeds.md (scripts/reproduce-seeds.sh) shows the full-length numbers.
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/model/engine_runner.h"
#include "gtest/gtest.h"
#include "workloads/matrix.h"

namespace blkbench {
namespace {

// One run per cell, keyed by the cell's axis values ("kernel=... scheduler=...").
struct SeedRuns {
  std::map<std::string, v1::RunResult> by_axes;

  const v1::RunResult& Get(const std::string& axes) const {
    auto it = by_axes.find(axes);
    EXPECT_NE(it, by_axes.end()) << "no cell " << axes;
    static const v1::RunResult kEmpty;
    return it == by_axes.end() ? kEmpty : it->second;
  }
};

SeedRuns RunSeed(const std::string& file, uint64_t runtime_ns) {
  SeedRuns out;
  absl::StatusOr<workloads::Matrix> m =
      workloads::ParseMatrixFile(std::string(BLKBENCH_SOURCE_DIR) + "/examples/seeds/" + file);
  EXPECT_TRUE(m.ok()) << m.status();
  if (!m.ok()) return out;
  for (const v1::CellSpec& cell : m->cells) {
    RunContext ctx;
    ctx.cell = cell;
    ctx.cell.mutable_job()->set_runtime_ns(runtime_ns);
    for (v1::NamedJob& j : *ctx.cell.mutable_jobs()) j.mutable_job()->set_runtime_ns(runtime_ns);
    ctx.sample_interval = std::chrono::milliseconds(1000);
    absl::StatusOr<v1::RunResult> r = engine::NewEngineRunner()->Run(ctx);
    EXPECT_TRUE(r.ok()) << file << ": " << r.status();
    std::string key;
    for (const v1::AxisValue& a : cell.axes()) {
      if (!key.empty()) key += " ";
      key += a.key() + "=" + a.value();
    }
    if (r.ok()) out.by_axes[key] = *r;
  }
  return out;
}

// RunSeed for an example whose machine profiles are paths from the repository root.
SeedRuns RunSeedFromSourceRoot(const std::string& file, uint64_t runtime_ns) {
  const std::filesystem::path cwd = std::filesystem::current_path();
  std::filesystem::current_path(BLKBENCH_SOURCE_DIR);
  SeedRuns s = RunSeed(file, runtime_ns);
  std::filesystem::current_path(cwd);
  return s;
}

double In(const v1::RunResult& r, const std::string& key) {
  auto it = r.internals().find(key);
  EXPECT_NE(it, r.internals().end()) << key;
  return it == r.internals().end() ? 0 : it->second;
}

double PerIo(const v1::RunResult& r, const std::string& key) {
  const double ios = static_cast<double>(r.io().read_ios() + r.io().write_ios());
  return ios > 0 ? In(r, key) / ios : 0;
}

TEST(SeedsTest, Seed000BatchDispatchRaisesIopsForBothElevators) {
  const SeedRuns s = RunSeed("000-batch-dispatch.yaml", 20'000'000);
  const std::string after = "sim:6.16+dd-batch-dispatch+bfq-batch-dispatch";
  for (const std::string sched : {"mq-deadline", "bfq"}) {
    const v1::RunResult& b = s.Get("scheduler=" + sched + " kernel=sim:6.16");
    const v1::RunResult& a = s.Get(absl::StrCat("scheduler=", sched, " kernel=", after));
    EXPECT_GT(a.iops(), 1.15 * b.iops()) << sched;
    EXPECT_LT(In(a, "cpu_ns_per_io.lock_spin"), In(b, "cpu_ns_per_io.lock_spin")) << sched;
  }
}

TEST(SeedsTest, Seed001WholeSplitAndWakeByTagsRaiseTheSequentialRatio) {
  const SeedRuns s = RunSeed("001-split-tag-preemption.yaml", 1'000'000'000);
  const v1::RunResult& orig = s.Get("kernel=sim:5.18");
  const v1::RunResult& split = s.Get("kernel=sim:5.18+split-whole-bio+wake-by-tags");
  const v1::RunResult& nopre = s.Get("kernel=sim:5.18+split-whole-bio+wake-by-tags+tag-no-preempt");
  EXPECT_GT(In(split, "seq_ratio"), In(orig, "seq_ratio") + 0.05);
  EXPECT_GE(In(nopre, "seq_ratio"), In(split, "seq_ratio") - 0.02);
  EXPECT_LE(In(nopre, "seq_ratio"), 0.76);  // the 3/4 ceiling of 4-way splits
  EXPECT_LT(PerIo(split, "tags.waits"), PerIo(orig, "tags.waits"));
  // Past the start-up transient (0.54 after a 1 s ramp) the original kernel's ratio
  // settles at about 0.42.
  EXPECT_LT(In(orig, "seq_ratio"), 0.48);
}

// Seed 001's job on this host's kernel (6.18; examples/seeds/real/ measures 0.10-0.28 on
// a loop device): with wake_batch 1 each freed tag wakes one waiter, so a piece lands
// next to its predecessor only when woken tasks run late enough for a task to find a
// second tag free. Without wake-up latency that never happens.
TEST(SeedsTest, Seed001OnThisHostsKernelNeedsLateWakeUpsForSequentialPieces) {
  const SeedRuns s = RunSeed("threads/001-on-this-host.yaml", 1'000'000'000);
  EXPECT_EQ(In(s.Get("kernel=sim:6.18 machine=small-vm"), "seq_ratio"), 0.0);
  const double late = In(s.Get("kernel=sim:6.18 machine=kvm-2vcpu"), "seq_ratio");
  EXPECT_GT(late, 0.05);
  EXPECT_LT(late, 0.4);
}

// Seed 001 by the VM's size: 5.18 wakes 8 waiters per 8 freed tags, and the more of them
// run at once, the fewer tags each takes in a row, so the original kernel's ratio falls
// (42 % on 4 vCPUs, 23 % on 16; the thread has 21 %).
TEST(SeedsTest, Seed001BaselineFallsAsMoreWokenWaitersRunAtOnce) {
  const SeedRuns s = RunSeedFromSourceRoot("threads/001-vcpus.yaml", 1'000'000'000);
  const double four = In(s.Get("kernel=sim:5.18 machine=small-vm"), "seq_ratio");
  const double sixteen = In(
      s.Get("kernel=sim:5.18 machine=engine/profiles/variants/small-vm-16vcpu.yaml"), "seq_ratio");
  EXPECT_LT(sixteen, four - 0.1);
}

// On a 16-vCPU VM with a fast virtual disk (threads/001-fast-disk.yaml) the series'
// model gives both of the thread's steps (x1.90 and x3.29) within the x1.5 the seeds are
// held to: the no-preemption flag stops new bios' front pieces (none preempt) and the
// sequential ratio rises.
TEST(SeedsTest, Seed001OnAFastDiskAndSixteenVcpusTheThreadsStepsHold) {
  const SeedRuns s = RunSeedFromSourceRoot("threads/001-fast-disk.yaml", 1'000'000'000);
  const std::string vm = " machine=engine/profiles/variants/small-vm-16vcpu.yaml";
  const double orig = In(s.Get("kernel=sim:5.18" + vm), "seq_ratio");
  const v1::RunResult& wake = s.Get("kernel=sim:5.18+split-whole-bio+wake-by-tags" + vm);
  const v1::RunResult& nopre =
      s.Get("kernel=sim:5.18+split-whole-bio+wake-by-tags+tag-no-preempt" + vm);
  ASSERT_GT(orig, 0);
  EXPECT_GT(In(wake, "seq_ratio") / orig, 1.90 / 1.5);
  EXPECT_LT(In(wake, "seq_ratio") / orig, 1.90 * 1.5);
  EXPECT_GT(In(nopre, "seq_ratio") / orig, 3.29 / 1.5);
  EXPECT_LT(In(nopre, "seq_ratio") / orig, 3.29 * 1.5);
  EXPECT_GT(In(wake, "tags.preempts"), 0);
  EXPECT_EQ(In(nopre, "tags.preempts"), 0);
}

TEST(SeedsTest, Seed002SerializedDispatchCutsContention) {
  const SeedRuns s = RunSeed("002-deadline-contention.yaml", 20'000'000);
  const v1::RunResult& base = s.Get("kernel=sim:6.8");
  const v1::RunResult& ser = s.Get("kernel=sim:6.8+dd-serialize-dispatch");
  const v1::RunResult& lists = s.Get("kernel=sim:6.8+dd-serialize-dispatch+dd-insert-lists");
  EXPECT_GT(ser.iops(), 1.3 * base.iops());
  EXPECT_GT(lists.iops(), 1.3 * base.iops());
  EXPECT_LT(In(ser, "lock.dd_lock.contended_share"), In(base, "lock.dd_lock.contended_share"));
}

TEST(SeedsTest, Seed003RetryCutsSingleTagAllocations) {
  const SeedRuns s = RunSeed("003-plug-batch-retry.yaml", 50'000'000);
  const v1::RunResult& single = s.Get("kernel=sim:6.18");
  const v1::RunResult& retry = s.Get("kernel=sim:6.18+plug-batch-retry");
  EXPECT_LT(PerIo(retry, "tags.single_allocs"), PerIo(single, "tags.single_allocs"));
  EXPECT_GE(retry.iops(), 0.99 * single.iops());
}

// The Optane rows: t/io_uring over two drives is CPU-bound on its thread, so a second
// thread (with a drive of its own) doubles IOPS; there each thread drives one device at
// QD128 and the retry removes its single-tag allocations.
TEST(SeedsTest, Seed003OptaneRowsAreBoundByTheThreadsCpu) {
  const SeedRuns one = RunSeed("003-plug-batch-retry-optane-1thread.yaml", 20'000'000);
  const SeedRuns two = RunSeed("003-plug-batch-retry-optane-2threads.yaml", 20'000'000);
  const std::string single = "kernel=sim:6.18";
  const std::string retry = "kernel=sim:6.18+plug-batch-retry";
  EXPECT_NEAR(two.Get(single).iops() / one.Get(single).iops(), 2.0, 0.1);
  EXPECT_GT(PerIo(two.Get(single), "tags.single_allocs"), 0.05);
  EXPECT_EQ(PerIo(two.Get(retry), "tags.single_allocs"), 0);
  EXPECT_GE(two.Get(retry).iops(), two.Get(single).iops());
}

TEST(SeedsTest, Seed004OneGroupNoIdleLetsBandwidthScaleWithJobs) {
  // Separate fio processes: N = 1, and 8 named jobs started 200 ms apart.
  const SeedRuns one = RunSeed("004-bfq-one-group.yaml", 300'000'000);
  const SeedRuns eight = RunSeed("004-bfq-one-group-n8.yaml", 300'000'000);
  const std::string before = "kernel=sim:5.14";
  const std::string after = "kernel=sim:5.14+bfq-one-group-no-idle";
  const double b1 = one.Get(before).bw_bytes_per_sec();
  const double b8 = eight.Get(before).bw_bytes_per_sec();
  const double a1 = one.Get(after).bw_bytes_per_sec();
  const double a8 = eight.Get(after).bw_bytes_per_sec();
  EXPECT_NEAR(b8 / b1, 1.0, 0.1);  // idling: effective queue depth 1 whatever N
  EXPECT_NEAR(a1 / b1, 1.0, 0.1);
  EXPECT_GT(a8, 3.0 * a1);
  // The mechanism: idling keeps one request at the device; without it, several.
  EXPECT_LT(In(eight.Get(before), "device.inflight_mean"), 1.2);
  EXPECT_GT(In(eight.Get(after), "device.inflight_mean"), 2.0);
}

// The thread's last line: one fio with numjobs gives the same result with or without the
// patch, because bfq stably merges the clones' queues into one.
TEST(SeedsTest, Seed004OneFioWithNumjobsIsTheSameWithOrWithoutThePatch) {
  const SeedRuns s = RunSeed("004-bfq-one-group-numjobs.yaml", 300'000'000);
  const SeedRuns one = RunSeed("004-bfq-one-group.yaml", 300'000'000);
  const double before = s.Get("numjobs=8 kernel=sim:5.14").bw_bytes_per_sec();
  const double after = s.Get("numjobs=8 kernel=sim:5.14+bfq-one-group-no-idle").bw_bytes_per_sec();
  EXPECT_NEAR(after / before, 1.0, 0.05);
  EXPECT_GT(before, 3.0 * one.Get("kernel=sim:5.14").bw_bytes_per_sec());  // no idling
}

// Every shipped example matrix, including the real-device seed variants, validates (from
// the repository root, where the examples' machine profile paths start).
TEST(SeedsTest, EveryExampleMatrixValidates) {
  const std::filesystem::path cwd = std::filesystem::current_path();
  std::filesystem::current_path(BLKBENCH_SOURCE_DIR);
  int files = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(
           std::string(BLKBENCH_SOURCE_DIR) + "/examples")) {
    if (entry.path().extension() != ".yaml") continue;
    ++files;
    absl::StatusOr<workloads::Matrix> m = workloads::ParseMatrixFile(entry.path().string());
    EXPECT_TRUE(m.ok()) << entry.path() << ": " << m.status();
    if (m.ok()) {
      EXPECT_FALSE(m->cells.empty()) << entry.path();
    }
  }
  std::filesystem::current_path(cwd);
  EXPECT_GE(files, 8);
}

}  // namespace
}  // namespace blkbench
