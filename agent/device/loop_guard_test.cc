// Integration tests on REAL loop devices (root, losetup) for the rest of the wrong-disk guard:
// signatures only libblkid knows (minix, cramfs), swap, an LVM2 label and GPT refused by
// PrepareExclusiveWrite with a message naming them and without a single write; and the
// identity of a loop device (backing file, its inode from LOOP_GET_STATUS64, size, by-id
// names) read from the real sysfs and re-checked after a re-attach. Every test skips, with
// the reason, when loop devices or a formatting tool are unavailable.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>

#include "absl/strings/str_cat.h"
#include "agent/device/identity.h"
#include "agent/device/safety.h"
#include "agent/device/testutil.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace blkbench {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr uint64_t kLoopBytes = 64 << 20;

class LoopGuardTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<testing::LoopDevice>> loop =
        testing::LoopDevice::Attach(kLoopBytes);
    if (!loop.ok()) GTEST_SKIP() << "no loop device: " << loop.status();
    loop_ = *std::move(loop);
  }

  // Runs `argv` (a formatting tool) and flushes the device, so that nothing it wrote is
  // still in the page cache when the write counters are read.
  void Format(const std::vector<std::string>& argv) {
    testing::CommandResult result = testing::Run(argv);
    ASSERT_EQ(result.exit_code, 0) << argv[0] << ": " << result.output;
    Flush();
  }

  void Flush() {
    const int fd = open(loop_->path().c_str(), O_RDONLY | O_CLOEXEC);
    ASSERT_GE(fd, 0);
    EXPECT_EQ(fsync(fd), 0);
    close(fd);
  }

  // The whole guard on the allowlisted loop device: refused with `reason`, and not one
  // sector written (field 7 of its stat file; a data-less flush may still count as a
  // write, so the write count itself is no evidence).
  void ExpectRefusedWithoutAWrite(const std::string& reason) {
    const uint64_t before = loop_->SectorsWritten();
    std::vector<AllowlistEntry> allowlist = {{loop_->path(), "loop"}};
    absl::Status checked = CheckSafeToWrite(loop_->path());
    EXPECT_EQ(checked.code(), absl::StatusCode::kFailedPrecondition) << checked;
    EXPECT_THAT(checked.message(), HasSubstr(reason));
    absl::StatusOr<ExclusiveHold> hold = PrepareExclusiveWrite(allowlist, loop_->path());
    EXPECT_EQ(hold.status().code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_THAT(hold.status().message(), HasSubstr(reason));
    EXPECT_EQ(loop_->SectorsWritten(), before);
  }

  std::string Carries(const std::string& what) {
    return absl::StrCat(loop_->path(), " carries ", what);
  }

  testing::TempDir tmp_;
  std::unique_ptr<testing::LoopDevice> loop_;
};

TEST_F(LoopGuardTest, MinixFilesystemIsRefused) {
  if (!testing::HaveCommand("mkfs.minix")) GTEST_SKIP() << "mkfs.minix (util-linux) missing";
  Format({"mkfs.minix", loop_->path()});
  ExpectRefusedWithoutAWrite(
      Carries("a minix filesystem (libblkid: TYPE=minix, USAGE=filesystem, magic at byte 1040)"));
}

TEST_F(LoopGuardTest, CramfsFilesystemIsRefused) {
  if (!testing::HaveCommand("mkfs.cramfs")) GTEST_SKIP() << "mkfs.cramfs (util-linux) missing";
  testing::WriteFile(tmp_.path() + "/root/hello.txt", "a file in a cramfs image\n");
  Format({"mkfs.cramfs", tmp_.path() + "/root", loop_->path()});
  ExpectRefusedWithoutAWrite(
      Carries("a cramfs filesystem (libblkid: TYPE=cramfs, USAGE=filesystem, magic at byte 0)"));
}

TEST_F(LoopGuardTest, SwapSignatureIsRefused) {
  if (!testing::HaveCommand("mkswap")) GTEST_SKIP() << "mkswap (util-linux) missing";
  Format({"mkswap", loop_->path()});
  const long page = sysconf(_SC_PAGESIZE);
  ExpectRefusedWithoutAWrite(Carries(absl::StrCat(
      "a swap area (libblkid: TYPE=swap, USAGE=other, magic at byte ", page - 10, ")")));
}

TEST_F(LoopGuardTest, Lvm2PhysicalVolumeLabelIsRefused) {
  // pvcreate's label, written by hand: libblkid accepts it only with the right CRC.
  const std::string label = testing::LvmPvLabel();
  const int fd = open(loop_->path().c_str(), O_WRONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(pwrite(fd, label.data(), label.size(), 512), static_cast<ssize_t>(label.size()));
  EXPECT_EQ(fsync(fd), 0);
  close(fd);
  Flush();
  ExpectRefusedWithoutAWrite(Carries(
      "an LVM2 physical volume (libblkid: TYPE=LVM2_member, USAGE=raid, magic at byte 536)"));
}

TEST_F(LoopGuardTest, EmptyGptIsRefused) {
  if (!testing::HaveCommand("sfdisk")) GTEST_SKIP() << "sfdisk (fdisk package) missing";
  // A label without partitions: the signature alone must refuse it.
  testing::WriteFile(tmp_.path() + "/table", "label: gpt\n");
  Format(
      {"sh", "-c",
       absl::StrCat("sfdisk -q --wipe never '", loop_->path(), "' < '", tmp_.path(), "/table'")});
  ExpectRefusedWithoutAWrite(
      Carries("a GPT partition table (libblkid: PTTYPE=gpt, magic at byte 512)"));
}

TEST_F(LoopGuardTest, IdentityOfALoopDeviceFromTheRealSysfs) {
  testing::Symlink(loop_->path(), tmp_.path() + "/by-id/virtio-blkbench-guard");
  absl::StatusOr<DeviceIdentity> id =
      ReadDeviceIdentity(loop_->path(), {.system = {}, .by_id_dir = tmp_.path() + "/by-id"});
  ASSERT_TRUE(id.ok()) << id.status();
  struct stat backing;
  ASSERT_EQ(stat(loop_->backing_path().c_str(), &backing), 0);
  EXPECT_EQ(id->kernel_name, loop_->name());
  EXPECT_TRUE(id->is_loop);
  EXPECT_EQ(id->size_bytes, kLoopBytes);
  EXPECT_EQ(id->logical_block_size, 512u);
  EXPECT_EQ(id->backing_file, loop_->backing_path());
  EXPECT_EQ(id->backing_inode, backing.st_ino);
  EXPECT_EQ(id->backing_device, backing.st_dev);
  EXPECT_THAT(id->by_id, ElementsAre("virtio-blkbench-guard"));
}

TEST_F(LoopGuardTest, ReattachingASmallerFileIsCaughtByTheRecheck) {
  DeviceIdentityRegistry registry;
  absl::StatusOr<DeviceIdentity> a = ReadDeviceIdentity(loop_->path());
  ASSERT_TRUE(registry.Register(loop_->path(), a).ok());
  const std::string file_a = loop_->backing_path();
  const uint64_t inode_a = a->backing_inode;

  if (absl::Status re = loop_->ReattachNewBackingFile(kLoopBytes / 2); !re.ok()) {
    GTEST_SKIP() << "could not re-attach the same loop device: " << re;
  }
  const uint64_t written = loop_->SectorsWritten();
  // B is blank: the signature checks and the hold pass; only the identity tells.
  absl::StatusOr<ExclusiveHold> hold =
      PrepareExclusiveWrite({{loop_->path(), "loop"}}, loop_->path());
  ASSERT_TRUE(hold.ok()) << hold.status();
  absl::StatusOr<DeviceIdentity> b = ReadDeviceIdentity(loop_->path());
  ASSERT_TRUE(b.ok()) << b.status();
  absl::Status check = registry.Check(loop_->path(), *b);
  EXPECT_EQ(check.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(
      check.message(),
      HasSubstr(absl::StrCat(loop_->path(), ": backing file changed from ", file_a, " (inode ",
                             inode_a, ") to ", loop_->backing_path(), " (inode ", b->backing_inode,
                             "); size changed from 64 MiB "
                             "to 32 MiB")));
  EXPECT_EQ(loop_->SectorsWritten(), written);
}

}  // namespace
}  // namespace blkbench
