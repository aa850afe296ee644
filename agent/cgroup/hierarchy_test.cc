// Tests for finding the I/O cgroup hierarchy: mountinfo and /proc/self/cgroup parsing, and
// the v2-io / v1-blkio choice on fake trees.
#include "agent/cgroup/hierarchy.h"

#include "agent/cgroup/fake_cgroupfs.h"
#include "common/testing/loop_device.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace blkbench {
namespace {

using ::testing::HasSubstr;

// This machine's table, abridged: a hybrid host with v1 controllers and an empty cgroup2.
constexpr char kHybrid[] =
    "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
    "32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
    "38 31 0:35 / /sys/fs/cgroup/blkio rw,relatime shared:7 master:1 - cgroup cgroup rw,blkio\n"
    "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n"
    "50 23 8:1 / /mnt/with\\040space rw - ext4 /dev/sda1 rw\n";

TEST(CgroupMountsTest, ParsesCgroupLinesOnly) {
  absl::StatusOr<std::vector<CgroupMount>> mounts = ParseCgroupMounts(kHybrid);
  ASSERT_TRUE(mounts.ok()) << mounts.status();
  ASSERT_EQ(mounts->size(), 3u);
  EXPECT_EQ((*mounts)[0].mount_point, "/sys/fs/cgroup/cpu");
  EXPECT_FALSE((*mounts)[0].blkio);
  EXPECT_EQ((*mounts)[1].mount_point, "/sys/fs/cgroup/blkio");
  EXPECT_EQ((*mounts)[1].version, CgroupVersion::kV1);
  EXPECT_TRUE((*mounts)[1].blkio);
  EXPECT_EQ((*mounts)[1].root, "/");
  EXPECT_EQ((*mounts)[2].version, CgroupVersion::kV2);
  EXPECT_EQ((*mounts)[2].mount_point, "/sys/fs/cgroup/unified");
  EXPECT_FALSE(ParseCgroupMounts("31 23 0:28 / /x rw\n").ok());
}

TEST(CgroupMountsTest, OwnCgroupPathPerVersion) {
  constexpr char kSelf[] = "9:name=systemd:/\n7:blkio,io:/lab/agent\n4:memory:/m\n0::/u/agent\n";
  EXPECT_EQ(*OwnCgroupPath(kSelf, CgroupVersion::kV1), "/lab/agent");
  EXPECT_EQ(*OwnCgroupPath(kSelf, CgroupVersion::kV2), "/u/agent");
  EXPECT_TRUE(absl::IsNotFound(OwnCgroupPath("0::/\n", CgroupVersion::kV1).status()));
}

TEST(CgroupMountsTest, ParentPathsAreRelativeAndPlain) {
  EXPECT_TRUE(IsValidCgroupParent("blkbench"));
  EXPECT_TRUE(IsValidCgroupParent("lab.slice/blkbench-1"));
  for (const char* bad : {"", "/blkbench", "blkbench/", "a//b", "..", "a/../b", "a b", "a\nb"}) {
    EXPECT_FALSE(IsValidCgroupParent(bad)) << bad;
  }
}

TEST(FindIoHierarchyTest, HybridHostUsesV1Blkio) {
  testing::TempDir tmp("cgroup_hierarchy");
  testing::FakeCgroupFs fs(tmp.path(), {.version = CgroupVersion::kV1});
  absl::StatusOr<IoHierarchy> h = FindIoHierarchy(fs.paths(), "blkbench");
  ASSERT_TRUE(h.ok()) << h.status();
  EXPECT_EQ(h->version, CgroupVersion::kV1);
  EXPECT_EQ(h->mount_point, fs.mount_point());
  EXPECT_EQ(h->own_dir, fs.own_dir());
}

TEST(FindIoHierarchyTest, UnifiedHostWithIoUsesV2) {
  testing::TempDir tmp("cgroup_hierarchy");
  testing::FakeCgroupFs fs(tmp.path(), {.version = CgroupVersion::kV2});
  absl::StatusOr<IoHierarchy> h = FindIoHierarchy(fs.paths(), "blkbench");
  ASSERT_TRUE(h.ok()) << h.status();
  EXPECT_EQ(h->version, CgroupVersion::kV2);
  EXPECT_EQ(h->mount_point, tmp.path() + "/sys/fs/cgroup");
  EXPECT_EQ(h->own_dir, tmp.path() + "/sys/fs/cgroup/agent.slice");
  // A nested parent looks at its own parent's subtree_control, which lacks io here.
  EXPECT_EQ(FindIoHierarchy(fs.paths(), "agent.slice/blkbench").status().code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(FindIoHierarchy(fs.paths(), "../etc").status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(FindIoHierarchyTest, UnifiedHostWithoutIoIsRefusedWithTheFix) {
  testing::TempDir tmp("cgroup_hierarchy");
  testing::FakeCgroupFs fs(tmp.path(), {.version = CgroupVersion::kV2, .io_enabled = false});
  absl::StatusOr<IoHierarchy> h = FindIoHierarchy(fs.paths(), "blkbench");
  EXPECT_EQ(h.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(h.status().message(), HasSubstr("without io in"));
  EXPECT_THAT(h.status().message(), HasSubstr("echo +io >"));
  EXPECT_THAT(h.status().message(), HasSubstr("no cgroup v1 hierarchy with blkio"));
}

}  // namespace
}  // namespace blkbench
