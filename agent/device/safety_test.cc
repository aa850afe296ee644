// Tests for the wrong-disk guard that need no real block device: allowlist resolution with
// files and symlinks, in-use checks against a fake sysfs/procfs, and exclusive holds on files.
#include "agent/device/safety.h"

#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "agent/device/testutil.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace blkbench {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

class AllowlistTest : public ::testing::Test {
 protected:
  void SetUp() override {
    allowed_ = tmp_.path() + "/allowed.img";
    other_ = tmp_.path() + "/other.img";
    testing::WriteFile(allowed_, "");
    testing::WriteFile(other_, "");
    testing::Symlink(allowed_, tmp_.path() + "/by-id/wwn-0x5000c500a1b2c3d4");
    allowlist_ = {{tmp_.path() + "/by-id/wwn-0x5000c500a1b2c3d4", "hdd"}};
  }

  testing::TempDir tmp_;
  std::string allowed_;
  std::string other_;
  std::vector<AllowlistEntry> allowlist_;
};

TEST_F(AllowlistTest, AcceptsTheEntryItsTargetAndAnotherSymlinkToIt) {
  EXPECT_EQ(*ResolveAllowlisted(allowlist_, allowlist_[0].path), allowed_);
  EXPECT_EQ(*ResolveAllowlisted(allowlist_, allowed_), allowed_);
  testing::Symlink("../allowed.img", tmp_.path() + "/links/alias");
  EXPECT_EQ(*ResolveAllowlisted(allowlist_, tmp_.path() + "/links/alias"), allowed_);
}

TEST_F(AllowlistTest, RefusesOtherPathsAndSymlinksToThem) {
  absl::Status status = ResolveAllowlisted(allowlist_, other_).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(status.message(), AllOf(HasSubstr(other_), HasSubstr("allowlist")));

  testing::Symlink(other_, tmp_.path() + "/sneaky");
  status = ResolveAllowlisted(allowlist_, tmp_.path() + "/sneaky").status();
  EXPECT_EQ(status.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(status.message(), HasSubstr(tmp_.path() + "/sneaky (resolves to " + other_));

  status = ResolveAllowlisted(allowlist_, tmp_.path() + "/nothing-here").status();
  EXPECT_EQ(status.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(ResolveAllowlisted({}, allowed_).status().code(), absl::StatusCode::kPermissionDenied);
}

TEST_F(AllowlistTest, ReResolvesOnEveryCall) {
  ASSERT_TRUE(ResolveAllowlisted(allowlist_, allowed_).ok());
  // The by-id link now points elsewhere (a disk was swapped): the old target is refused.
  const std::string link = allowlist_[0].path;
  ASSERT_EQ(unlink(link.c_str()), 0);
  testing::Symlink(other_, link);
  EXPECT_EQ(ResolveAllowlisted(allowlist_, allowed_).status().code(),
            absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(*ResolveAllowlisted(allowlist_, other_), other_);
  // And a missing allowlisted device is NotFound, not a crash.
  ASSERT_EQ(unlink(other_.c_str()), 0);
  EXPECT_TRUE(absl::IsNotFound(ResolveAllowlisted(allowlist_, link).status()));
}

TEST_F(AllowlistTest, RegularFilesAreSafeOtherTypesAreNot) {
  EXPECT_TRUE(CheckSafeToWrite(allowed_).ok());
  absl::Status status = CheckSafeToWrite(tmp_.path());
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(status.message(), HasSubstr("neither a block device nor a regular file"));
  EXPECT_EQ(CheckSafeToWrite("/dev/null").code(), absl::StatusCode::kFailedPrecondition);
}

TEST_F(AllowlistTest, FileHoldsAreExclusiveAndMoveOnly) {
  absl::StatusOr<ExclusiveHold> hold = HoldExclusive(allowed_);
  ASSERT_TRUE(hold.ok()) << hold.status();
  EXPECT_GE(hold->fd(), 0);
  absl::Status second = HoldExclusive(allowed_).status();
  EXPECT_EQ(second.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(second.message(), HasSubstr(allowed_));

  ExclusiveHold moved = *std::move(hold);
  EXPECT_EQ(hold->fd(), -1);
  EXPECT_FALSE(HoldExclusive(allowed_).ok());
  { ExclusiveHold released = std::move(moved); }
  EXPECT_TRUE(HoldExclusive(allowed_).ok());
  // Symlinks are not followed: the caller passes the resolved path.
  EXPECT_FALSE(HoldExclusive(allowlist_[0].path).ok());
}

TEST_F(AllowlistTest, PrepareExclusiveWriteRunsTheWholeGuard) {
  absl::StatusOr<ExclusiveHold> hold = PrepareExclusiveWrite(allowlist_, allowlist_[0].path);
  ASSERT_TRUE(hold.ok()) << hold.status();
  EXPECT_EQ(hold->path(), allowed_);
  EXPECT_EQ(PrepareExclusiveWrite(allowlist_, other_).status().code(),
            absl::StatusCode::kPermissionDenied);
}

// In-use checks against a fake sysfs and procfs: disk loop0 (7:0), partition loop0p1 (259:0).
class InUseTest : public ::testing::Test {
 protected:
  void SetUp() override {
    paths_ = testing::FakePaths(tmp_.path());
    disk_ = testing::MakeFakeDisk(paths_, "loop0", "7:0");
    testing::WriteFile(paths_.procfs + "/self/mountinfo",
                       "22 1 259:2 / / rw,relatime shared:1 - ext4 /dev/nvme0n1p2 rw\n");
    testing::WriteFile(paths_.procfs + "/swaps", "Filename Type Size Used Priority\n");
  }

  absl::Status Check() { return CheckNotInUse("/dev/loop0", makedev(7, 0), paths_); }

  testing::TempDir tmp_;
  SystemPaths paths_;
  std::string disk_;
};

TEST_F(InUseTest, AnUnusedDiskPasses) { EXPECT_TRUE(Check().ok()) << Check(); }

TEST_F(InUseTest, MountedDiskOrPartitionIsRefused) {
  testing::WriteFile(paths_.procfs + "/self/mountinfo",
                     "22 1 259:2 / / rw - ext4 /dev/nvme0n1p2 rw\n"
                     "36 22 7:0 / /mnt/x rw - ext4 /dev/loop0 rw\n");
  absl::Status status = Check();
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(status.message(), HasSubstr("/dev/loop0 is mounted at /mnt/x (ext4)"));

  testing::MakeFakePartition(paths_, disk_, "loop0p1", "259:0");
  testing::WriteFile(paths_.procfs + "/self/mountinfo",
                     "36 22 259:0 / /mnt/my\\040data rw - xfs /dev/loop0p1 rw\n");
  status = Check();
  EXPECT_THAT(status.message(),
              HasSubstr("/dev/loop0 (partition loop0p1) is mounted at /mnt/my data (xfs)"));
  EXPECT_THAT(status.message(), HasSubstr("/dev/loop0 has partitions (loop0p1)"));
}

TEST_F(InUseTest, PartitionsHoldersAndReadOnlyAreEachNamed) {
  testing::MakeFakePartition(paths_, disk_, "loop0p1", "259:0");
  testing::MakeFakePartition(paths_, disk_, "loop0p2", "259:1");
  testing::WriteFile(disk_ + "/holders/dm-0", "");
  testing::WriteFile(disk_ + "/loop0p2/holders/md127", "");
  testing::WriteFile(disk_ + "/ro", "1\n");
  absl::Status status = Check();
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(status.message(), HasSubstr("/dev/loop0 has partitions (loop0p1, loop0p2)"));
  EXPECT_THAT(status.message(), HasSubstr("/dev/loop0 is held by dm-0"));
  EXPECT_THAT(status.message(), HasSubstr("/dev/loop0 (partition loop0p2) is held by md127"));
  EXPECT_THAT(status.message(), HasSubstr("/dev/loop0 is read-only"));
  EXPECT_THAT(status.message(), HasSubstr("refusing to write to it"));
}

TEST_F(InUseTest, ActiveSwapIsFoundByDeviceNumber) {
  // A device node of another name with the same number (as udev's /dev/disk/by-* or a copy).
  const std::string node = tmp_.path() + "/swapdev";
  if (mknod(node.c_str(), S_IFBLK | 0600, makedev(7, 0)) != 0) {
    GTEST_SKIP() << "mknod needs CAP_MKNOD";
  }
  testing::WriteFile(paths_.procfs + "/swaps",
                     "Filename Type Size Used Priority\n" + node + " partition 65532 0 -2\n");
  absl::Status status = Check();
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(status.message(), HasSubstr("/dev/loop0 is active swap"));
}

TEST_F(InUseTest, BtrfsMountIsFoundByItsSource) {
  const std::string node = tmp_.path() + "/btrfsdev";
  if (mknod(node.c_str(), S_IFBLK | 0600, makedev(7, 0)) != 0) {
    GTEST_SKIP() << "mknod needs CAP_MKNOD";
  }
  testing::WriteFile(paths_.procfs + "/self/mountinfo",
                     "40 22 0:45 / /data rw - btrfs " + node + " rw\n");
  EXPECT_THAT(Check().message(), HasSubstr("/dev/loop0 is mounted at /data (btrfs)"));
}

TEST_F(InUseTest, UnreadableTablesRefuseRatherThanGuess) {
  testing::WriteFile(paths_.procfs + "/self/mountinfo", "garbage\n");
  absl::Status status = Check();
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(status.message(), HasSubstr("mount table cannot be read"));
  EXPECT_EQ(CheckNotInUse("/dev/loop9", makedev(7, 9), paths_).code(),
            absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace blkbench
