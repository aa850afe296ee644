// Tests for the mountinfo and /proc/swaps parsers.
#include "agent/device/proc_parse.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace blkbench {
namespace {

using ::testing::HasSubstr;

TEST(MountInfoTest, ParsesFieldsOptionalTagsAndEscapes) {
  absl::StatusOr<std::vector<MountEntry>> mounts = ParseMountInfo(
      "22 1 259:2 / / rw,relatime shared:1 - ext4 /dev/nvme0n1p2 rw\n"
      "36 22 7:3 / /mnt/my\\040disk rw master:1 shared:7 - xfs /dev/loop3 rw,attr2\n"
      "40 22 0:45 / /data rw - btrfs /dev/sdc rw,space_cache=v2\n"
      "41 22 0:21 / /proc rw,nosuid - proc proc rw\n");
  ASSERT_TRUE(mounts.ok()) << mounts.status();
  ASSERT_EQ(mounts->size(), 4u);
  EXPECT_EQ((*mounts)[0].major, 259u);
  EXPECT_EQ((*mounts)[0].minor, 2u);
  EXPECT_EQ((*mounts)[0].mount_point, "/");
  EXPECT_EQ((*mounts)[0].source, "/dev/nvme0n1p2");
  EXPECT_EQ((*mounts)[1].mount_point, "/mnt/my disk");
  EXPECT_EQ((*mounts)[1].fs_type, "xfs");
  EXPECT_EQ((*mounts)[1].source, "/dev/loop3");
  EXPECT_EQ((*mounts)[2].major, 0u);  // btrfs: anonymous device number
  EXPECT_EQ((*mounts)[2].source, "/dev/sdc");
  EXPECT_EQ((*mounts)[3].fs_type, "proc");
}

TEST(MountInfoTest, MalformedLinesAreErrors) {
  EXPECT_THAT(ParseMountInfo("22 1 259:2 / / rw ext4 /dev/x rw\n").status().message(),
              HasSubstr("line 1"));
  EXPECT_FALSE(ParseMountInfo("22 1 x:2 / / rw - ext4 /dev/x rw\n").ok());
  EXPECT_FALSE(ParseMountInfo("22 1 8:0 / / rw -\n").ok());
  EXPECT_TRUE(ParseMountInfo("").ok());
}

TEST(SwapsTest, ParsesPartitionsFilesAndDeletedFiles) {
  absl::StatusOr<std::vector<SwapEntry>> swaps = ParseSwaps(
      "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n"
      "/dev/loop4                              partition\t65532\t\t0\t\t-2\n"
      "/var/swap\\040file                       file\t\t1024\t\t0\t\t-3\n"
      "/old/swap\\040(deleted)                   file\t\t1024\t\t0\t\t-4\n");
  ASSERT_TRUE(swaps.ok()) << swaps.status();
  ASSERT_EQ(swaps->size(), 3u);
  EXPECT_EQ((*swaps)[0].path, "/dev/loop4");
  EXPECT_EQ((*swaps)[0].type, "partition");
  EXPECT_EQ((*swaps)[1].path, "/var/swap file");
  EXPECT_EQ((*swaps)[1].type, "file");
  EXPECT_EQ((*swaps)[2].path, "/old/swap (deleted)");
}

TEST(SwapsTest, HeaderOnlyAndMalformed) {
  absl::StatusOr<std::vector<SwapEntry>> swaps =
      ParseSwaps("Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n");
  ASSERT_TRUE(swaps.ok());
  EXPECT_TRUE(swaps->empty());
  EXPECT_FALSE(ParseSwaps("Filename Type Size Used Priority\n/dev/sda2 partition\n").ok());
}

TEST(UnescapeOctalTest, OnlyThreeDigitOctalEscapes) {
  EXPECT_EQ(UnescapeOctal("a\\040b\\011c\\134d"), "a b\tc\\d");
  EXPECT_EQ(UnescapeOctal("a\\09b\\"), "a\\09b\\");
}

}  // namespace
}  // namespace blkbench
