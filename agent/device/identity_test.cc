// Tests for device identity: reading it from a fake sysfs tree and from regular files, the
// comparison's messages, and the registry's record-once, check-before-every-run contract.
#include "agent/device/identity.h"

#include <sys/sysmacros.h>

#include <cstdio>

#include "agent/device/testutil.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace blkbench {
namespace {

using ::testing::HasSubstr;

class IdentityTest : public ::testing::Test {
 protected:
  void SetUp() override { paths_ = testing::FakePaths(tmp_.path()); }

  // A fake loop device loop1 (7:1) of 64 MiB attached to /dev/shm/a.
  std::string FakeLoop() {
    const std::string dir = testing::MakeFakeDisk(paths_, "loop1", "7:1");
    testing::WriteFile(dir + "/diskseq", "12\n");
    testing::WriteFile(dir + "/loop/backing_file", "/dev/shm/a\n");
    testing::WriteFile(dir + "/loop/offset", "0\n");
    testing::WriteFile(dir + "/loop/sizelimit", "0\n");
    return dir;
  }

  DeviceIdentity Read(const std::string& dir, const std::string& path) {
    absl::StatusOr<DeviceIdentity> id = ReadBlockIdentity(dir);
    EXPECT_TRUE(id.ok()) << id.status();
    if (!id.ok()) return DeviceIdentity();
    id->path = path;
    id->resolved = path;
    return *id;
  }

  testing::TempDir tmp_;
  SystemPaths paths_;
};

TEST_F(IdentityTest, ReadsADisksNumbersGeometryAndHardwareIdentity) {
  const std::string dir = testing::MakeFakeDisk(paths_, "nvme0n1", "259:0");
  testing::WriteFile(dir + "/wwid", "eui.0025388b91b2c3d4\n");
  testing::WriteFile(dir + "/device/serial", "S4EWNX0N123456  \n");
  testing::WriteFile(dir + "/device/model", "Samsung SSD 970 EVO\n");
  testing::WriteFile(dir + "/diskseq", "9\n");
  DeviceIdentity id = Read(dir, "/dev/nvme0n1");
  EXPECT_TRUE(id.is_block);
  EXPECT_FALSE(id.is_loop);
  EXPECT_EQ(id.kernel_name, "nvme0n1");
  EXPECT_EQ(id.major, 259u);
  EXPECT_EQ(id.minor, 0u);
  EXPECT_EQ(id.size_bytes, 131072u * 512);
  EXPECT_EQ(id.logical_block_size, 512u);
  EXPECT_EQ(id.diskseq, 9u);
  EXPECT_EQ(id.wwid, "eui.0025388b91b2c3d4");
  EXPECT_EQ(id.serial, "S4EWNX0N123456");
  EXPECT_EQ(id.model, "Samsung SSD 970 EVO");
}

TEST_F(IdentityTest, APartitionHasItsDisksHardwareIdentity) {
  const std::string disk = testing::MakeFakeDisk(paths_, "sda", "8:0");
  testing::WriteFile(disk + "/device/wwid", "naa.5000c500a1b2c3d4\n");
  const std::string part = testing::MakeFakePartition(paths_, disk, "sda1", "8:1");
  DeviceIdentity id = Read(part, "/dev/sda1");
  EXPECT_EQ(id.kernel_name, "sda1");
  EXPECT_EQ(id.minor, 1u);
  EXPECT_EQ(id.wwid, "naa.5000c500a1b2c3d4");
}

TEST_F(IdentityTest, ReadsALoopDevicesBackingFile) {
  DeviceIdentity id = Read(FakeLoop(), "/dev/loop1");
  EXPECT_TRUE(id.is_loop);
  EXPECT_EQ(id.backing_file, "/dev/shm/a");
  EXPECT_EQ(id.serial, "");
}

TEST_F(IdentityTest, MissingRequiredAttributesAreErrors) {
  const std::string dir = testing::MakeFakeDisk(paths_, "vdb", "252:16");
  ASSERT_EQ(remove((dir + "/size").c_str()), 0);
  EXPECT_FALSE(ReadBlockIdentity(dir).ok());
}

TEST_F(IdentityTest, TheSameDeviceHasNoChange) {
  const std::string dir = FakeLoop();
  EXPECT_EQ(IdentityChange(Read(dir, "/dev/loop1"), Read(dir, "/dev/loop1")), "");
}

TEST_F(IdentityTest, AReattachedLoopDeviceNamesBackingFileAndSize) {
  const std::string dir = FakeLoop();
  DeviceIdentity before = Read(dir, "/dev/loop1");
  before.backing_inode = 12;
  testing::WriteFile(dir + "/loop/backing_file", "/dev/shm/b\n");
  testing::WriteFile(dir + "/size", "65536\n");
  testing::WriteFile(dir + "/diskseq", "13\n");  // every attach bumps it: not a change itself
  DeviceIdentity after = Read(dir, "/dev/loop1");
  after.backing_inode = 34;
  EXPECT_EQ(IdentityChange(before, after),
            "/dev/loop1: backing file changed from /dev/shm/a (inode 12) to /dev/shm/b (inode "
            "34); size changed from 64 MiB to 32 MiB; refusing to run on it until the agent is "
            "restarted (the agent records what each allowlisted device is when it first "
            "registers it)");
}

TEST_F(IdentityTest, AFileReplacedUnderTheSamePathIsAChange) {
  const std::string dir = FakeLoop();
  DeviceIdentity before = Read(dir, "/dev/loop1");
  before.backing_device = makedev(0, 23);
  before.backing_inode = 12;
  DeviceIdentity after = before;
  after.backing_inode = 13;
  EXPECT_THAT(
      IdentityChange(before, after),
      HasSubstr("backing file changed from /dev/shm/a (inode 12) to /dev/shm/a (inode 13)"));
  after.backing_device = makedev(0, 24);
  EXPECT_THAT(IdentityChange(before, after), HasSubstr("/dev/shm/a (device 0:23, inode 12) to "
                                                       "/dev/shm/a (device 0:24, inode 13)"));
}

TEST_F(IdentityTest, ADetachedLoopDeviceIsAChange) {
  const std::string dir = FakeLoop();
  DeviceIdentity before = Read(dir, "/dev/loop1");
  ASSERT_EQ(remove((dir + "/loop/backing_file").c_str()), 0);
  testing::WriteFile(dir + "/size", "0\n");
  EXPECT_THAT(IdentityChange(before, Read(dir, "/dev/loop1")),
              HasSubstr("backing file changed from /dev/shm/a (inode 0) to nothing (detached); "
                        "size changed from 64 MiB to 0 bytes"));
}

TEST_F(IdentityTest, ASwappedDiskIsNamedBySerialWwidModelAndDiskseq) {
  const std::string dir = testing::MakeFakeDisk(paths_, "sdb", "8:16");
  testing::WriteFile(dir + "/device/wwid", "naa.1\n");
  testing::WriteFile(dir + "/device/serial", "AAA\n");
  testing::WriteFile(dir + "/device/model", "Disk A\n");
  testing::WriteFile(dir + "/diskseq", "5\n");
  DeviceIdentity before = Read(dir, "/dev/sdb");
  testing::WriteFile(dir + "/device/wwid", "naa.2\n");
  testing::WriteFile(dir + "/device/serial", "BBB\n");
  testing::WriteFile(dir + "/device/model", "Disk B\n");
  testing::WriteFile(dir + "/diskseq", "6\n");
  const std::string change = IdentityChange(before, Read(dir, "/dev/sdb"));
  EXPECT_THAT(change, HasSubstr("/dev/sdb: diskseq changed from 5 to 6"));
  EXPECT_THAT(change, HasSubstr("WWID changed from \"naa.1\" to \"naa.2\""));
  EXPECT_THAT(change, HasSubstr("serial changed from \"AAA\" to \"BBB\""));
  EXPECT_THAT(change, HasSubstr("model changed from \"Disk A\" to \"Disk B\""));
}

TEST_F(IdentityTest, ADiskReenumeratedUnderAnotherNameIsAChange) {
  DeviceIdentity before = Read(testing::MakeFakeDisk(paths_, "sdb", "8:16"), "/dev/disk/by-id/x");
  before.resolved = "/dev/sdb";
  DeviceIdentity after = Read(testing::MakeFakeDisk(paths_, "sdc", "8:32"), "/dev/disk/by-id/x");
  after.resolved = "/dev/sdc";
  const std::string change = IdentityChange(before, after);
  EXPECT_THAT(change, HasSubstr("/dev/disk/by-id/x: now resolves to /dev/sdc (was /dev/sdb)"));
  EXPECT_THAT(change, HasSubstr("kernel name changed from sdb to sdc"));
  EXPECT_THAT(change, HasSubstr("device number changed from 8:16 to 8:32"));
}

TEST_F(IdentityTest, ByIdNamesChangeOnlyWhenNoneIsShared) {
  DeviceIdentity before = Read(testing::MakeFakeDisk(paths_, "sdb", "8:16"), "/dev/sdb");
  before.by_id = {"ata-A_1", "wwn-0x1"};
  DeviceIdentity after = before;
  after.by_id = {};  // udev re-creating links
  EXPECT_EQ(IdentityChange(before, after), "");
  after.by_id = {"wwn-0x1"};
  EXPECT_EQ(IdentityChange(before, after), "");
  after.by_id = {"ata-B_2", "wwn-0x2"};
  EXPECT_THAT(IdentityChange(before, after),
              HasSubstr("by-id names changed from ata-A_1, wwn-0x1 to ata-B_2, wwn-0x2"));
}

TEST_F(IdentityTest, RegularFilesAreIdentifiedByDeviceAndInode) {
  const std::string file = tmp_.path() + "/scratch.img";
  testing::WriteFile(file, std::string(4096, '\0'));
  absl::StatusOr<DeviceIdentity> before = ReadDeviceIdentity(file);
  ASSERT_TRUE(before.ok()) << before.status();
  EXPECT_FALSE(before->is_block);
  EXPECT_EQ(before->size_bytes, 4096u);
  EXPECT_NE(before->file_inode, 0u);
  EXPECT_EQ(IdentityChange(*before, *ReadDeviceIdentity(file)), "");

  // Another file renamed over it: same path, another inode.
  testing::WriteFile(file + ".new", std::string(8192, '\0'));
  ASSERT_EQ(rename((file + ".new").c_str(), file.c_str()), 0);
  const std::string change = IdentityChange(*before, *ReadDeviceIdentity(file));
  EXPECT_THAT(change, HasSubstr(file + ": is another file: inode "));
  EXPECT_THAT(change, HasSubstr("size changed from 4096 bytes to 8192 bytes"));
}

TEST_F(IdentityTest, ReadingAMissingPathIsNotFound) {
  EXPECT_EQ(ReadDeviceIdentity(tmp_.path() + "/none").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(ReadDeviceIdentity(tmp_.path()).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(IdentityTest, RegistryRecordsOnceAndChecksEveryRun) {
  const std::string dir = FakeLoop();
  const DeviceIdentity a = Read(dir, "/dev/loop1");
  DeviceIdentity b = a;
  b.backing_file = "/dev/shm/b";
  DeviceIdentityRegistry registry;

  absl::Status never = registry.Check("/dev/loop1", a);
  EXPECT_EQ(never.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(never.message(), HasSubstr("/dev/loop1 has no recorded identity"));

  EXPECT_TRUE(registry.Register("/dev/loop1", a).ok());
  EXPECT_TRUE(registry.Check("/dev/loop1", a).ok());
  absl::Status changed = registry.Check("/dev/loop1", b);
  EXPECT_EQ(changed.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(changed.message(), HasSubstr("backing file changed from /dev/shm/a"));

  // A re-registration (reconnect) that finds B does not re-record: B is not offered and
  // stays refused, A is still what counts.
  absl::Status reregistered = registry.Register("/dev/loop1", b);
  EXPECT_EQ(reregistered.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(registry.Check("/dev/loop1", b).message(),
              HasSubstr("was not offered at the agent's latest registration"));
  EXPECT_THAT(registry.Check("/dev/loop1", a).message(),
              HasSubstr("was not offered at the agent's latest registration"));
  EXPECT_TRUE(registry.Register("/dev/loop1", a).ok());
  EXPECT_TRUE(registry.Check("/dev/loop1", a).ok());
}

TEST_F(IdentityTest, ADeviceMissingAtRegistrationIsNotOfferedAndItsRunsAreRefused) {
  DeviceIdentityRegistry registry;
  absl::Status missing = registry.Register(
      "/dev/disk/by-id/gone", absl::NotFoundError("/dev/disk/by-id/gone does not resolve"));
  EXPECT_EQ(missing.code(), absl::StatusCode::kNotFound);
  DeviceIdentity any = Read(FakeLoop(), "/dev/disk/by-id/gone");
  absl::Status run = registry.Check("/dev/disk/by-id/gone", any);
  EXPECT_EQ(run.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(run.message(),
              HasSubstr("/dev/disk/by-id/gone was not offered at the agent's latest registration "
                        "(/dev/disk/by-id/gone does not resolve)"));
  // It appears later: the next registration records it then.
  EXPECT_TRUE(registry.Register("/dev/disk/by-id/gone", any).ok());
  EXPECT_TRUE(registry.Check("/dev/disk/by-id/gone", any).ok());
}

}  // namespace
}  // namespace blkbench
