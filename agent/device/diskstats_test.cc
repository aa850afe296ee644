// Tests for diskstats.h: the kernel's line formats, iostat -x arithmetic checked by hand,
// and a real loop device whose counters move by exactly what the test wrote.
#include "agent/device/diskstats.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cstdlib>
#include <vector>

#include "common/disk_interval.h"
#include "common/testing/loop_device.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace blkbench {
namespace {

using ::testing::HasSubstr;

// 6.x: 20 fields (with discards and flushes); 4.x before 4.18: 14.
constexpr char kDiskstats[] =
    "   7       0 loop0 120 3 960 40 250 10 2000 500 2 900 1300 0 0 0 0 7 5\n"
    "   8       0 sda 1000 50 80000 2000 3000 300 240000 9000 0 5000 11000\n"
    "   8       1 sda1 10 0 80 1 0 0 0 0 0 1 1 1 0 8 1 2 1\n";

TEST(DiskStatsTest, ParsesEveryKernelsLineFormat) {
  absl::StatusOr<DiskStats> loop = ParseDiskStats(kDiskstats, 7, 0);
  ASSERT_TRUE(loop.ok()) << loop.status();
  EXPECT_EQ(loop->name, "loop0");
  EXPECT_EQ(loop->reads, 120u);
  EXPECT_EQ(loop->sectors_written, 2000u);
  EXPECT_EQ(loop->in_flight, 2u);
  EXPECT_EQ(loop->weighted_io_ms, 1300u);
  EXPECT_EQ(loop->flushes, 7u);
  EXPECT_EQ(loop->flush_ms, 5u);
  absl::StatusOr<DiskStats> old = ParseDiskStats(kDiskstats, 8, 0);
  ASSERT_TRUE(old.ok()) << old.status();
  EXPECT_EQ(old->writes, 3000u);
  EXPECT_EQ(old->discards, 0u);
  EXPECT_TRUE(absl::IsNotFound(ParseDiskStats(kDiskstats, 9, 9).status()));
  absl::StatusOr<DiskStats> bad = ParseDiskStats("7 0 loop0 1 2 3\n", 7, 0);
  EXPECT_THAT(bad.status().message(), HasSubstr("line 1: 6 fields, expected at least 14"));
}

// Two readings 2 s apart, worked as iostat -x would.
TEST(DiskStatsTest, DeltaIsIostatsArithmetic) {
  DiskStats a, b;
  a.reads = 1000;
  b.reads = 3000;  // 2000 reads: 1000 r/s
  a.reads_merged = 0;
  b.reads_merged = 500;  // rrqm 500/(500+2000) = 20 %
  a.sectors_read = 0;
  b.sectors_read = 2000 * 8;  // 4 KiB each: rareq-sz 4, rkB/s 4000
  a.read_ms = 100;
  b.read_ms = 100 + 2000 * 3;  // r_await 3 ms
  a.io_ms = 0;
  b.io_ms = 1500;  // util 75 %
  a.weighted_io_ms = 0;
  b.weighted_io_ms = 6000;  // aqu-sz 3
  DiskStatsDelta d = Delta(a, b, 2.0);
  EXPECT_DOUBLE_EQ(d.r_per_s, 1000);
  EXPECT_DOUBLE_EQ(d.rrqm_pct, 20);
  EXPECT_DOUBLE_EQ(d.rkb_per_s, 4000);
  EXPECT_DOUBLE_EQ(d.rareq_kb, 4);
  EXPECT_DOUBLE_EQ(d.r_await_ms, 3);
  EXPECT_DOUBLE_EQ(d.util_pct, 75);
  EXPECT_DOUBLE_EQ(d.aqu_sz, 3);
  EXPECT_EQ(d.w_per_s, 0);
  EXPECT_EQ(d.w_await_ms, 0);  // no writes: no division by zero
  // A re-created device: counters went backwards.
  DiskStatsDelta reset = Delta(b, a, 2.0);
  EXPECT_EQ(reset.reads, 0u);
  EXPECT_EQ(reset.elapsed_s, 2.0);
}

// An interval's rates are over the time between its two readings, not the sample's
// interval: the counters are read after the executor cuts the sample, and on a busy host
// that lag differs from one sample to the next.
TEST(DiskStatsTest, AnIntervalIsTimedByItsReadings) {
  DiskStats a, b;
  a.weighted_io_ms = 0;
  b.weighted_io_ms = 110;  // 110 ms of requests in flight
  a.io_ms = 0;
  b.io_ms = 55;
  a.read_at_ns = 1'000'000'000;
  b.read_at_ns = 1'110'000'000;  // read 110 ms apart
  v1::DiskStatsInterval d;
  ASSERT_TRUE(IntervalDelta(a, b, &d));
  EXPECT_EQ(d.elapsed_ns(), 110'000'000u);
  // The sample says 100 ms; the readings' 110 ms wins: aqu-sz 1, util 50 %.
  const DiskIntervalStats st = IntervalStats(d, 0.100);
  EXPECT_DOUBLE_EQ(st.aqu_sz, 1.0);
  EXPECT_DOUBLE_EQ(st.util_pct, 50.0);
  // Without the readings' times (an older agent's sample), the given interval.
  d.clear_elapsed_ns();
  EXPECT_DOUBLE_EQ(IntervalStats(d, 0.100).aqu_sz, 1.1);
  // A parsed reading (no time) gives none.
  a.read_at_ns = 0;
  ASSERT_TRUE(IntervalDelta(a, b, &d));
  EXPECT_EQ(d.elapsed_ns(), 0u);
}

TEST(DiskStatsTest, ALoopDeviceCountsWhatWasWritten) {
  std::unique_ptr<testing::LoopDevice> loop = testing::LoopDevice::Create(16);
  if (loop == nullptr) GTEST_SKIP() << "loop devices unavailable (needs root and losetup)";
  struct stat st;
  ASSERT_EQ(stat(loop->path().c_str(), &st), 0);
  const uint32_t ma = major(st.st_rdev), mi = minor(st.st_rdev);
  absl::StatusOr<DiskStats> before = ReadDiskStats(ma, mi);
  ASSERT_TRUE(before.ok()) << before.status();
  const int fd = open(loop->path().c_str(), O_WRONLY | O_DIRECT | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  void* buf = nullptr;
  ASSERT_EQ(posix_memalign(&buf, 4096, 4096), 0);
  std::fill_n(static_cast<char*>(buf), 4096, 'x');
  for (int i = 0; i < 256; ++i) ASSERT_EQ(pwrite(fd, buf, 4096, i * 4096), 4096);
  close(fd);
  free(buf);
  absl::StatusOr<DiskStats> after = ReadDiskStats(ma, mi);
  ASSERT_TRUE(after.ok()) << after.status();
  DiskStatsDelta d = Delta(*before, *after, 1.0);
  EXPECT_EQ(d.write_bytes, 256u * 4096);  // a flush carries no data, so bytes are exact
  EXPECT_GE(d.writes, 256u);
  EXPECT_DOUBLE_EQ(d.wareq_kb, 256.0 * 4 / d.writes);
}

}  // namespace
}  // namespace blkbench
