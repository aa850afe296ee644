// Tests for block_trace.h: parsing the kernel's block tracepoint lines as printed on 6.18,
// the summary's arithmetic, and the real thing — tracefs events for a loop device while
// the test writes a known pattern, the instance and any mount it made gone afterwards,
// and a crashed run's instance removed by RecoverAll.
#include "agent/device/block_trace.h"

#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <sstream>

#include "agent/device/testutil.h"
#include "common/testing/command.h"
#include "common/testing/loop_device.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace blkbench {
namespace {

using ::testing::ElementsAre;

TEST(BlockTraceTest, ParsesTheKernelsLines) {
  BlockEvent e;
  ASSERT_TRUE(ParseBlockEvent(
      "              dd-12338   [000] ..... 31509.948078: block_rq_issue: 7,0 WS 4096 () 0 + "
      "8 be,0,4 [dd]",
      &e));
  EXPECT_EQ(e.event, "block_rq_issue");
  EXPECT_EQ(e.ts_ns, 31509948078000u);
  EXPECT_EQ(e.major, 7u);
  EXPECT_EQ(e.minor, 0u);
  EXPECT_EQ(e.rwbs, "WS");
  EXPECT_EQ(e.sector, 0u);
  EXPECT_EQ(e.nr_sectors, 8u);
  ASSERT_TRUE(ParseBlockEvent(
      "     ksoftirqd/0-14      [000] ..s.. 31509.956603: block_rq_complete: 7,0 WS () 16 + 8 "
      "be,0,4 [0]",
      &e));
  EXPECT_EQ(e.event, "block_rq_complete");
  EXPECT_EQ(e.sector, 16u);
  ASSERT_TRUE(ParseBlockEvent(
      "fio-7 [001] ..... 10.000000001: block_bio_backmerge: 259,0 R 2048 + 8 [fio]", &e));
  EXPECT_EQ(e.ts_ns, 10'000'000'001u);
  EXPECT_EQ(e.major, 259u);
  EXPECT_FALSE(ParseBlockEvent("# tracer: nop", &e));
  EXPECT_FALSE(ParseBlockEvent("CPU:1 [LOST 12 EVENTS]", &e));
}

// The kernel's lines become blkparse's: task pid, CPU, per-CPU sequence, time since the
// trace's start, the action letter, and the process name (or the error, for C).
TEST(BlockTraceTest, TextTraceWritesBlkparseLines) {
  std::ostringstream out;
  BlockTraceText text(out, 31509'000'000'000, 3);
  // A task name with dashes: the pid is after the last one.
  const std::string issue =
      "   my-job-name-12338 [002] ..... 31509.948078: block_rq_issue: 7,0 WS 4096 () 0 + "
      "8 be,0,4 [dd]";
  for (const std::string& line : {
           std::string("  ksoftirqd/0-14 [000] ..s.. 31509.900000: block_rq_merge: 7,0 WS 4096 () "
                       "0 + 8 [x]"),
           issue,
           std::string("  <idle>-0 [002] ..s.. 31509.956603: block_rq_complete: 7,0 WS () 0 + 8 "
                       "be,0,4 [0]"),
           std::string("  dd-12338 [001] ..... 31510.000000: block_split: 7,0 W 2048 / 2304 [dd]"),
           std::string("  dd-12338 [002] ..... 31510.000001: block_bio_queue: 7,0 W 16 + 8 [dd]"),
       }) {
    BlockEvent e;
    ASSERT_TRUE(ParseBlockEvent(line, &e)) << line;
    text.Add(e);
  }
  text.AddLost(5);
  EXPECT_EQ(text.written(), 3u);  // the merge has no letter; the queue is over the cap
  EXPECT_EQ(text.dropped(), 1u);
  EXPECT_EQ(out.str(),
            "  7,0    2        1     0.948078000 12338  D  WS 0 + 8 [dd]\n"
            "  7,0    2        2     0.956603000     0  C  WS 0 + 8 [0]\n"
            "  7,0    1        1     1.000000000 12338  X   W 2048 / 2304 [dd]\n"
            "# lost 5 events\n");
}

// Two runs of two adjacent requests (sectors 0, 8, then 100, 108): two of the four
// dispatches continue the previous one; every request spends 500 ns queued, 2 µs in the
// device.
TEST(BlockTraceTest, SummaryCountsSequentialIssuesAndLatencies) {
  BlockTraceAccumulator acc;
  auto ev = [](uint64_t ts, const char* name, uint64_t sector) {
    BlockEvent e;
    e.ts_ns = ts;
    e.event = name;
    e.rwbs = "W";
    e.sector = sector;
    e.nr_sectors = 8;
    return e;
  };
  uint64_t ts = 1000;
  for (uint64_t sector : {0, 8, 100, 108}) {
    acc.Add(ev(ts, "block_rq_insert", sector));
    acc.Add(ev(ts + 500, "block_rq_issue", sector));
    acc.Add(ev(ts + 2500, "block_rq_complete", sector));
    ts += 10'000;
  }
  const BlockTraceSummary& s = acc.summary();
  EXPECT_EQ(s.issued, 4u);
  EXPECT_EQ(s.completed, 4u);
  EXPECT_EQ(s.sequential_issues, 2u);
  EXPECT_DOUBLE_EQ(s.seq_ratio(), 0.5);
  EXPECT_EQ(s.insert_to_issue.count(), 4u);
  EXPECT_EQ(s.issue_to_complete.count(), 4u);
  EXPECT_NEAR(s.issue_to_complete.mean_ns(), 2000, 1);
  EXPECT_DOUBLE_EQ(s.Internals().at("seq_ratio"), 0.5);
}

TEST(BlockTraceTest, ParsesSplitsAndRequeues) {
  BlockEvent e;
  ASSERT_TRUE(
      ParseBlockEvent("fio-7 [001] ..... 10.000000002: block_split: 8,0 R 2048 / 2304 [fio]", &e));
  EXPECT_EQ(e.event, "block_split");
  EXPECT_EQ(e.sector, 2048u);
  EXPECT_EQ(e.nr_sectors, 0u);
  ASSERT_TRUE(ParseBlockEvent(
      "kworker/0:1H-9 [000] ..... 10.5: block_rq_requeue: 8,0 R () 4096 + 8 be,0,4 [0]", &e));
  EXPECT_EQ(e.event, "block_rq_requeue");
  EXPECT_EQ(e.sector, 4096u);
  EXPECT_EQ(e.nr_sectors, 8u);
}

// Reads issued at sectors 100, 50, 200 and a write at 10 (its own direction: no
// inversion): one inversion (50 after 100). In flight: reads at 100 and 50 overlap for
// 1000 of the 4000 ns from the first issue to the last completion.
TEST(BlockTraceTest, SummaryCountsInversionsInflightMergesSplitsAndRequeues) {
  BlockTraceAccumulator acc;
  auto ev = [](uint64_t ts, const char* name, const char* rwbs, uint64_t sector) {
    BlockEvent e;
    e.ts_ns = ts;
    e.event = name;
    e.rwbs = rwbs;
    e.sector = sector;
    e.nr_sectors = 8;
    return e;
  };
  acc.Add(ev(0, "block_rq_issue", "R", 100));
  acc.Add(ev(1000, "block_rq_issue", "R", 50));
  acc.Add(ev(2000, "block_rq_complete", "R", 100));
  acc.Add(ev(2000, "block_rq_complete", "R", 50));
  acc.Add(ev(2500, "block_rq_issue", "W", 10));
  acc.Add(ev(3000, "block_rq_complete", "W", 10));
  acc.Add(ev(3000, "block_rq_issue", "R", 200));
  acc.Add(ev(3500, "block_rq_requeue", "R", 200));  // back to the queue: not in flight
  acc.Add(ev(3600, "block_rq_issue", "R", 200));
  acc.Add(ev(4000, "block_rq_complete", "R", 200));
  acc.Add(ev(4100, "block_bio_backmerge", "R", 208));
  acc.Add(ev(4200, "block_bio_frontmerge", "R", 0));
  acc.Add(ev(4300, "block_bio_backmerge", "R", 300));
  acc.Add(ev(4400, "block_rq_merge", "R", 400));
  BlockEvent split = ev(4500, "block_split", "R", 512);
  split.nr_sectors = 0;
  acc.Add(split);
  const BlockTraceSummary& s = acc.summary();
  EXPECT_EQ(s.issued, 5u);  // the requeued request's second issue counts as a dispatch
  EXPECT_EQ(s.completed, 4u);
  EXPECT_EQ(s.requeues, 1u);
  EXPECT_EQ(s.inversions, 1u);
  EXPECT_EQ(s.inflight_max, 2u);
  // 0-1000: 1, 1000-2000: 2, 2000-2500: 0, 2500-3000: 1, 3000-3500: 1, 3500-3600: 0,
  // 3600-4000: 1 → 1000 + 2000 + 500 + 500 + 400 = 4400 request·ns over 4000 ns.
  EXPECT_EQ(s.inflight_span_ns, 4000u);
  EXPECT_DOUBLE_EQ(s.inflight_mean(), 1.1);
  EXPECT_EQ(s.back_merges, 2u);
  EXPECT_EQ(s.front_merges, 1u);
  EXPECT_EQ(s.rq_merges, 1u);
  EXPECT_EQ(s.merged, 4u);
  EXPECT_EQ(s.splits, 1u);
  const std::map<std::string, double> in = s.Internals();
  EXPECT_DOUBLE_EQ(in.at("device.inflight_mean"), 1.1);
  EXPECT_DOUBLE_EQ(in.at("dispatch.requeues"), 1);
  EXPECT_DOUBLE_EQ(in.at("trace.inversions"), 1);
  EXPECT_DOUBLE_EQ(in.at("trace.merges.back"), 2);
  EXPECT_DOUBLE_EQ(in.at("trace.splits"), 1);
}

class BlockTraceRealTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (getuid() != 0) GTEST_SKIP() << "needs root (tracefs)";
    loop_ = testing::LoopDevice::Create(16);
    if (loop_ == nullptr) GTEST_SKIP() << "loop devices unavailable";
    struct stat st;
    ASSERT_EQ(stat(loop_->path().c_str(), &st), 0);
    options_.major = major(st.st_rdev);
    options_.minor = minor(st.st_rdev);
    options_.instance = absl::StrCat("blkbench-test-", getpid());
    options_.buffer_kb = 1024;
    testing::WriteFile(tmp_.path() + "/proc/sys/kernel/random/boot_id", "boot-1\n");
    auto j =
        SettingsJournal::Open(tmp_.path() + "/state", {"/sys"}, testing::FakePaths(tmp_.path()));
    ASSERT_TRUE(j.ok()) << j.status();
    journal_ = std::move(*j);
    struct stat inst;
    was_mounted_ = stat((options_.tracefs + "/instances").c_str(), &inst) == 0;
  }
  // Direct 4 KiB writes at the given block numbers, one at a time.
  void WriteBlocks(const std::vector<uint64_t>& blocks) {
    const int fd = open(loop_->path().c_str(), O_WRONLY | O_DIRECT | O_CLOEXEC);
    ASSERT_GE(fd, 0);
    void* buf = nullptr;
    ASSERT_EQ(posix_memalign(&buf, 4096, 4096), 0);
    std::fill_n(static_cast<char*>(buf), 4096, 'b');
    for (uint64_t b : blocks) ASSERT_EQ(pwrite(fd, buf, 4096, b * 4096), 4096);
    close(fd);
    free(buf);
  }
  // The agent died mid-run: what Start had done by then (the journal entry, the instance
  // with a filtered event enabled) is undone by the next agent's RecoverAll. In the same
  // test as the tracing above: both mount and unmount the host's tracefs, so they must not
  // run at once (ctest runs tests in parallel processes).
  void CrashAndRecover() {
    // Mounted as a crashed Start would have left it (and unmounted at the end if we did).
    const bool mounted_here =
        !was_mounted_ && mount("nodev", options_.tracefs.c_str(), "tracefs", 0, nullptr) == 0;
    ASSERT_TRUE(was_mounted_ || mounted_here) << strerror(errno);
    const std::string dir = options_.tracefs + "/instances/" + options_.instance;
    JournalEntry entry;
    entry.name = BlockTraceJournalEntry(options_.instance);
    entry.configfs_items.push_back({dir, ""});
    ASSERT_TRUE(journal_->Record(entry).ok());
    ASSERT_EQ(mkdir(dir.c_str(), 0755), 0) << strerror(errno);
    testing::WriteFile(dir + "/events/block/block_rq_issue/enable", "1\n");
    journal_.reset();  // the lock goes with the process
    auto j =
        SettingsJournal::Open(tmp_.path() + "/state", {"/sys"}, testing::FakePaths(tmp_.path()));
    ASSERT_TRUE(j.ok()) << j.status();
    absl::StatusOr<RecoveryReport> report = (*j)->RecoverAll();
    ASSERT_TRUE(report.ok()) << report.status();
    EXPECT_THAT(report->restored, ElementsAre(entry.name));
    EXPECT_FALSE(std::filesystem::exists(dir));
    if (mounted_here) {
      EXPECT_EQ(umount(options_.tracefs.c_str()), 0) << strerror(errno);
    }
  }
  bool Mounted() const {
    struct stat st;
    return stat((options_.tracefs + "/instances").c_str(), &st) == 0;
  }

  testing::TempDir tmp_{"block_trace_test"};
  std::unique_ptr<testing::LoopDevice> loop_;
  BlockTraceOptions options_;
  std::unique_ptr<SettingsJournal> journal_;
  bool was_mounted_ = false;
};

TEST_F(BlockTraceRealTest, TracesALoopDeviceAndLeavesTheHostAsFound) {
  std::vector<uint64_t> sequential, strided;
  for (uint64_t i = 0; i < 256; ++i) {
    sequential.push_back(i);
    strided.push_back(1024 + 2 * i);  // never adjacent
  }
  for (const auto& [blocks, expected_sequential] :
       {std::pair{sequential, 255u}, std::pair{strided, 0u}}) {
    auto trace = BlockTrace::Start(options_, *journal_);
    ASSERT_TRUE(trace.ok()) << trace.status();
    WriteBlocks(blocks);
    absl::StatusOr<BlockTraceSummary> s = (*trace)->Stop();
    ASSERT_TRUE(s.ok()) << s.status();
    EXPECT_EQ(s->lost_events, 0u);
    EXPECT_EQ(s->issued, 256u);
    EXPECT_EQ(s->completed, 256u);
    EXPECT_EQ(s->sequential_issues, expected_sequential);
    EXPECT_EQ(s->issue_to_complete.count(), 256u);
    // Left as found: no instance, no journal entry, tracefs mounted only if it was.
    EXPECT_FALSE(std::filesystem::exists(options_.tracefs + "/instances/" + options_.instance));
    EXPECT_FALSE(journal_->Contains(BlockTraceJournalEntry(options_.instance)));
    EXPECT_EQ(Mounted(), was_mounted_);
  }
  CrashAndRecover();
}

}  // namespace
}  // namespace blkbench
