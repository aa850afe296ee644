// Tests for the sysfs helpers: scheduler list parsing, attribute I/O, device directories.
#include "agent/device/sysfs.h"

#include "agent/device/testutil.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace blkbench {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(ParseSchedulersTest, BracketsMarkTheCurrentOne) {
  absl::StatusOr<SchedulerList> list = ParseSchedulers("none [mq-deadline] kyber bfq\n");
  ASSERT_TRUE(list.ok()) << list.status();
  EXPECT_THAT(list->available, ElementsAre("none", "mq-deadline", "kyber", "bfq"));
  EXPECT_EQ(list->current, "mq-deadline");

  list = ParseSchedulers("[none] mq-deadline");
  ASSERT_TRUE(list.ok());
  EXPECT_EQ(list->current, "none");
}

TEST(ParseSchedulersTest, LoneNoneWithoutBracketsIsCurrent) {
  // elv_iosched_show for a queue without elevator support (bio-based dm, md).
  absl::StatusOr<SchedulerList> list = ParseSchedulers("none\n");
  ASSERT_TRUE(list.ok());
  EXPECT_THAT(list->available, ElementsAre("none"));
  EXPECT_EQ(list->current, "none");
}

TEST(ParseSchedulersTest, EmptyIsEmpty) {
  absl::StatusOr<SchedulerList> list = ParseSchedulers("");
  ASSERT_TRUE(list.ok());
  EXPECT_TRUE(list->available.empty());
  EXPECT_EQ(list->current, "");
}

TEST(ParseSchedulersTest, RejectsMalformedLists) {
  EXPECT_THAT(ParseSchedulers("[none] [bfq]").status().message(), HasSubstr("two"));
  EXPECT_FALSE(ParseSchedulers("none [bfq").ok());
  EXPECT_FALSE(ParseSchedulers("none bfq]").ok());
  EXPECT_FALSE(ParseSchedulers("[]").ok());
}

TEST(KernelNameTest, RejectsPathTricks) {
  EXPECT_TRUE(IsSafeKernelName("nvme0n1p2"));
  EXPECT_TRUE(IsSafeKernelName("dm-3"));
  EXPECT_FALSE(IsSafeKernelName(""));
  EXPECT_FALSE(IsSafeKernelName("."));
  EXPECT_FALSE(IsSafeKernelName(".."));
  EXPECT_FALSE(IsSafeKernelName("../../etc"));
  EXPECT_FALSE(IsSafeKernelName("a b"));
}

TEST(AttributeTest, ReadsTrimsParsesAndWrites) {
  testing::TempDir tmp;
  const std::string path = tmp.path() + "/nr_requests";
  testing::WriteFile(path, "  64\n");
  EXPECT_EQ(*ReadAttribute(path), "64");
  EXPECT_EQ(*ReadUintAttribute(path), 64u);
  ASSERT_TRUE(WriteAttribute(path, "32").ok());
  EXPECT_EQ(testing::ReadFile(path), "32\n");

  testing::WriteFile(path, "lots\n");
  EXPECT_EQ(ReadUintAttribute(path).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::IsNotFound(ReadAttribute(tmp.path() + "/missing").status()));
  absl::Status status = WriteAttribute(tmp.path() + "/missing", "1");
  EXPECT_TRUE(absl::IsNotFound(status));
  EXPECT_THAT(status.message(), HasSubstr("/missing"));
}

TEST(AttributeTest, WriteDoesNotFollowSymlinks) {
  testing::TempDir tmp;
  testing::WriteFile(tmp.path() + "/target", "x\n");
  testing::Symlink(tmp.path() + "/target", tmp.path() + "/link");
  EXPECT_FALSE(WriteAttribute(tmp.path() + "/link", "y").ok());
  EXPECT_EQ(testing::ReadFile(tmp.path() + "/target"), "x\n");
}

TEST(BlockSysfsDirTest, FindsDisksAndPartitionsAndTheirQueueOwner) {
  testing::TempDir tmp;
  SystemPaths paths = testing::FakePaths(tmp.path());
  std::string disk = testing::MakeFakeDisk(paths, "loop0", "7:0");
  std::string part = testing::MakeFakePartition(paths, disk, "loop0p1", "259:0");

  absl::StatusOr<std::string> dir = BlockSysfsDir(paths, 7, 0);
  ASSERT_TRUE(dir.ok()) << dir.status();
  EXPECT_EQ(Basename(*dir), "loop0");
  EXPECT_EQ(QueueOwnerDir(*dir), *dir);

  dir = BlockSysfsDirByName(paths, "loop0p1");
  ASSERT_TRUE(dir.ok()) << dir.status();
  EXPECT_EQ(Basename(*dir), "loop0p1");
  EXPECT_EQ(Basename(QueueOwnerDir(*dir)), "loop0");

  EXPECT_TRUE(absl::IsNotFound(BlockSysfsDir(paths, 7, 9).status()));
  EXPECT_EQ(BlockSysfsDirByName(paths, "../x").status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(ListDirectoryTest, SortedWithoutDots) {
  testing::TempDir tmp;
  testing::WriteFile(tmp.path() + "/b", "");
  testing::WriteFile(tmp.path() + "/a", "");
  EXPECT_THAT(*ListDirectory(tmp.path()), ElementsAre("a", "b"));
  EXPECT_FALSE(ListDirectory(tmp.path() + "/none").ok());
}

}  // namespace
}  // namespace blkbench
