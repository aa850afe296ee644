// Tests for device facts against a fake sysfs tree and real regular files.
#include "agent/device/device_facts.h"

#include <unistd.h>

#include "agent/device/testutil.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace blkbench {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(BlockDeviceFactsTest, ReadsAFakeDisk) {
  testing::TempDir tmp;
  SystemPaths paths = testing::FakePaths(tmp.path());
  std::string disk = testing::MakeFakeDisk(paths, "sdb", "8:16");
  testing::WriteFile(disk + "/queue/rotational", "1\n");
  testing::WriteFile(disk + "/device/model", "ST4000NM0035-1V4\n");
  testing::WriteFile(disk + "/device/queue_depth", "32\n");

  absl::StatusOr<v1::DeviceFacts> facts = ReadBlockDeviceFacts(disk);
  ASSERT_TRUE(facts.ok()) << facts.status();
  EXPECT_EQ(facts->kernel_name(), "sdb");
  EXPECT_TRUE(facts->is_block());
  EXPECT_EQ(facts->size_bytes(), 131072ull * 512);
  EXPECT_EQ(facts->logical_block_size(), 512u);
  EXPECT_EQ(facts->physical_block_size(), 4096u);
  EXPECT_TRUE(facts->rotational());
  EXPECT_EQ(facts->model(), "ST4000NM0035-1V4");
  EXPECT_EQ(facts->queue_depth(), 32u);
  EXPECT_THAT(facts->schedulers(), ElementsAre("none", "mq-deadline", "kyber", "bfq"));
  EXPECT_EQ(facts->queue().scheduler(), "mq-deadline");
  EXPECT_EQ(facts->queue().nr_requests(), 64u);
  EXPECT_EQ(facts->queue().max_sectors_kb(), 1280u);
}

// The class from sysfs (the config may override it) and the capabilities the seeds'
// authors look at: poll queues, zoned model, write cache, hardware queues.
TEST(BlockDeviceFactsTest, DetectsTheClassAndCapabilities) {
  testing::TempDir tmp;
  SystemPaths paths = testing::FakePaths(tmp.path());
  struct Case {
    const char* name;
    const char* devno;
    const char* rotational;
    const char* model;  // "" = no device/model
    const char* want;
  } cases[] = {
      {"sdb", "8:16", "1", "ST4000NM0035-1V4", "hdd"},
      {"sdc", "8:32", "0", "Samsung SSD 870", "ssd"},
      {"nvme0n1", "259:0", "0", "Samsung SSD 980 PRO 1TB", "nvme"},
      {"nvme1n1", "259:1", "0", "INTEL SSDPF21Q800GB", "optane"},  // a P5800X
      {"nvme2n1", "259:2", "0", "Intel Optane SSD DC P4800X", "optane"},
      {"nullb0", "251:0", "0", "", "null_blk"},
      {"loop3", "7:3", "0", "", "loop"},
  };
  for (const Case& c : cases) {
    std::string disk = testing::MakeFakeDisk(paths, c.name, c.devno);
    testing::WriteFile(disk + "/queue/rotational", std::string(c.rotational) + "\n");
    if (*c.model) testing::WriteFile(disk + "/device/model", std::string(c.model) + "\n");
    absl::StatusOr<v1::DeviceFacts> facts = ReadBlockDeviceFacts(disk);
    ASSERT_TRUE(facts.ok()) << facts.status();
    EXPECT_EQ(facts->detected_class(), c.want) << c.name;
    EXPECT_EQ(DetectDeviceClass(*facts), c.want) << c.name;
  }
  std::string disk = testing::MakeFakeDisk(paths, "nvme3n1", "259:3");
  testing::WriteFile(disk + "/queue/zoned", "host-managed\n");
  testing::WriteFile(disk + "/queue/write_cache", "write back\n");
  testing::WriteFile(disk + "/queue/io_poll", "1\n");
  for (const char* q : {"0", "1", "2", "3"}) {
    testing::WriteFile(disk + "/mq/" + q + "/nr_tags", "1023\n");
  }
  absl::StatusOr<v1::DeviceFacts> facts = ReadBlockDeviceFacts(disk);
  ASSERT_TRUE(facts.ok()) << facts.status();
  EXPECT_EQ(facts->zoned(), "host-managed");
  EXPECT_EQ(facts->write_cache(), "write back");
  EXPECT_TRUE(facts->io_poll());
  EXPECT_EQ(facts->nr_hw_queues(), 4u);
}

TEST(BlockDeviceFactsTest, PartitionReportsItsOwnSizeAndItsDisksQueue) {
  testing::TempDir tmp;
  SystemPaths paths = testing::FakePaths(tmp.path());
  std::string disk = testing::MakeFakeDisk(paths, "sdb", "8:16");
  std::string part = testing::MakeFakePartition(paths, disk, "sdb1", "8:17");
  testing::WriteFile(part + "/size", "2048\n");
  testing::WriteFile(disk + "/device/model", "QEMU HARDDISK\n");

  absl::StatusOr<v1::DeviceFacts> facts = ReadBlockDeviceFacts(part);
  ASSERT_TRUE(facts.ok()) << facts.status();
  EXPECT_EQ(facts->kernel_name(), "sdb1");
  EXPECT_EQ(facts->size_bytes(), 2048u * 512);
  EXPECT_EQ(facts->model(), "QEMU HARDDISK");
  EXPECT_EQ(facts->queue().scheduler(), "mq-deadline");
}

TEST(BlockDeviceFactsTest, MissingSizeIsAnError) {
  testing::TempDir tmp;
  SystemPaths paths = testing::FakePaths(tmp.path());
  std::string disk = testing::MakeFakeDisk(paths, "sdb", "8:16");
  unlink((disk + "/size").c_str());
  EXPECT_FALSE(ReadBlockDeviceFacts(disk).ok());
}

TEST(BlockDeviceFactsTest, MalformedSchedulerIsAnErrorNamingTheFile) {
  testing::TempDir tmp;
  SystemPaths paths = testing::FakePaths(tmp.path());
  std::string disk = testing::MakeFakeDisk(paths, "sdb", "8:16");
  testing::WriteFile(disk + "/queue/scheduler", "[none] [bfq]\n");
  absl::Status status = ReadBlockDeviceFacts(disk).status();
  EXPECT_THAT(status.message(), HasSubstr("queue/scheduler"));
}

TEST(DeviceFactsTest, RegularFileThroughASymlink) {
  testing::TempDir tmp;
  const std::string file = tmp.path() + "/scratch.img";
  testing::WriteFile(file, std::string(8192, 'x'));
  testing::Symlink(file, tmp.path() + "/by-name");

  absl::StatusOr<v1::DeviceFacts> facts = ReadDeviceFacts(tmp.path() + "/by-name", "file");
  ASSERT_TRUE(facts.ok()) << facts.status();
  EXPECT_EQ(facts->path(), tmp.path() + "/by-name");
  EXPECT_EQ(facts->device_class(), "file");
  EXPECT_FALSE(facts->is_block());
  EXPECT_EQ(facts->kernel_name(), "");
  EXPECT_EQ(facts->size_bytes(), 8192u);
  EXPECT_GE(facts->logical_block_size(), 1u);
  EXPECT_EQ(facts->logical_block_size() & (facts->logical_block_size() - 1), 0u);
  EXPECT_FALSE(facts->has_queue());
  EXPECT_EQ(facts->schedulers_size(), 0);
}

TEST(DeviceFactsTest, MissingPathIsNotFound) {
  absl::Status status = ReadDeviceFacts("/nonexistent/blkbench-disk", "ssd").status();
  EXPECT_TRUE(absl::IsNotFound(status)) << status;
  EXPECT_THAT(status.message(), HasSubstr("/nonexistent/blkbench-disk"));
}

TEST(DeviceFactsTest, CharacterDeviceIsRefused) {
  absl::Status status = ReadDeviceFacts("/dev/null", "ssd").status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_THAT(status.message(), HasSubstr("neither a block device nor a regular file"));
}

}  // namespace
}  // namespace blkbench
