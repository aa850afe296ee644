// The per-cgroup counters' parsers on the kernel's formats, and the reader on a fake tree.
#include "agent/cgroup/io_stats.h"

#include <fstream>
#include <string>

#include "common/testing/loop_device.h"
#include "gtest/gtest.h"

namespace blkbench {
namespace {

TEST(IoStatsTest, ParsesCgroupV2IoStat) {
  // block/blk-cgroup.c blkcg_print_one_stat: one line per device, other devices ignored.
  const std::string text =
      "8:0 rbytes=1000 wbytes=0 rios=1 wios=0 dbytes=0 dios=0\n"
      "7:3 rbytes=8192 wbytes=4096 rios=2 wios=1 dbytes=0 dios=0 cost.vrate=100.00\n";
  const GroupIoStats s = ParseIoStatV2(text, "7:3");
  EXPECT_EQ(s.read_bytes, 8192u);
  EXPECT_EQ(s.write_bytes, 4096u);
  EXPECT_EQ(s.read_ios, 2u);
  EXPECT_EQ(s.write_ios, 1u);
  EXPECT_EQ(s.ios(), 3u);
  EXPECT_EQ(ParseIoStatV2(text, "7:4").ios(), 0u);  // no line: no I/O
}

TEST(IoStatsTest, ParsesCgroupV1BlkioFiles) {
  // blkg_prfill_rwstat: "MAJ:MIN Read|Write|Sync|Async|Discard|Total N", then "Total N".
  const std::string bytes =
      "7:3 Read 40960\n7:3 Write 8192\n7:3 Sync 49152\n7:3 Async 0\n7:3 Discard 0\n"
      "7:3 Total 49152\n8:0 Read 1\nTotal 49153\n";
  const std::string ios =
      "7:3 Read 10\n7:3 Write 2\n7:3 Sync 12\n7:3 Async 0\n7:3 Discard 0\n7:3 Total 12\n";
  const GroupIoStats s = ParseBlkioV1(bytes, ios, "7:3");
  EXPECT_EQ(s.read_bytes, 40960u);
  EXPECT_EQ(s.write_bytes, 8192u);
  EXPECT_EQ(s.read_ios, 10u);
  EXPECT_EQ(s.write_ios, 2u);
}

TEST(IoStatsTest, ReadsBfqElseThrottleElseSaysWhy) {
  testing::TempDir dir("io_stats");
  auto write = [&](const std::string& name, const std::string& text) {
    std::ofstream(dir.File(name)) << text;
  };
  EXPECT_EQ(ReadGroupIoStats(CgroupVersion::kV1, dir.path(), "7:3").status().code(),
            absl::StatusCode::kNotFound);
  write("blkio.bfq.io_service_bytes", "7:3 Read 4096\n");
  write("blkio.bfq.io_serviced", "7:3 Read 1\n");
  absl::StatusOr<GroupIoStats> bfq = ReadGroupIoStats(CgroupVersion::kV1, dir.path(), "7:3");
  ASSERT_TRUE(bfq.ok()) << bfq.status();
  EXPECT_EQ(bfq->read_ios, 1u);
  // bfq's counters win when they saw the device; blk-throttle's when bfq's are empty.
  write("blkio.throttle.io_service_bytes", "7:3 Read 8192\n");
  write("blkio.throttle.io_serviced", "7:3 Read 2\n");
  EXPECT_EQ(ReadGroupIoStats(CgroupVersion::kV1, dir.path(), "7:3")->read_ios, 1u);
  write("blkio.bfq.io_service_bytes", "Total 0\n");
  write("blkio.bfq.io_serviced", "Total 0\n");
  absl::StatusOr<GroupIoStats> throttle = ReadGroupIoStats(CgroupVersion::kV1, dir.path(), "7:3");
  ASSERT_TRUE(throttle.ok()) << throttle.status();
  EXPECT_EQ(throttle->read_ios, 2u);
  EXPECT_EQ(ReadGroupIoStats(CgroupVersion::kV2, dir.path(), "7:3").status().code(),
            absl::StatusCode::kNotFound);
  write("io.stat", "7:3 rbytes=4096 wbytes=0 rios=1 wios=0 dbytes=0 dios=0\n");
  EXPECT_EQ(ReadGroupIoStats(CgroupVersion::kV2, dir.path(), "7:3")->read_bytes, 4096u);
}

}  // namespace
}  // namespace blkbench
