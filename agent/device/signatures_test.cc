// Tests for on-disk signature detection, on regular files laid out like the real formats.
#include "agent/device/signatures.h"

#include <fcntl.h>
#include <unistd.h>

#include "agent/device/testutil.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace blkbench {
namespace {

using ::testing::HasSubstr;

constexpr uint64_t kImageBytes = 1 << 20;

// Probes an image of kImageBytes zero bytes with `magic` written at `offset`.
std::string Probe(uint64_t offset, const std::string& magic, uint64_t size = kImageBytes) {
  testing::TempDir tmp;
  std::string image(size, '\0');
  if (!magic.empty()) image.replace(offset, magic.size(), magic);
  const std::string path = tmp.path() + "/image";
  testing::WriteFile(path, image);
  int fd = open(path.c_str(), O_RDONLY);
  EXPECT_GE(fd, 0);
  absl::StatusOr<std::string> found = FindSignature(fd, size);
  close(fd);
  EXPECT_TRUE(found.ok()) << found.status();
  return found.ok() ? *found : "error";
}

TEST(SignaturesTest, BlankDeviceHasNone) { EXPECT_EQ(Probe(0, ""), ""); }

TEST(SignaturesTest, Filesystems) {
  EXPECT_THAT(Probe(1080, "\x53\xef"), HasSubstr("ext2/3/4 filesystem (0xEF53 at byte 1080)"));
  EXPECT_THAT(Probe(0, "XFSB"), HasSubstr("XFS"));
  EXPECT_THAT(Probe(65600, "_BHRfS_M"), HasSubstr("btrfs"));
  EXPECT_THAT(Probe(1024, "\x10\x20\xf5\xf2"), HasSubstr("f2fs"));
  EXPECT_THAT(Probe(3, "NTFS    "), HasSubstr("NTFS"));
  EXPECT_THAT(Probe(32769, "CD001"), HasSubstr("ISO 9660"));
}

TEST(SignaturesTest, SwapForEveryPageSize) {
  EXPECT_THAT(Probe(4096 - 10, "SWAPSPACE2"), HasSubstr("swap area"));
  EXPECT_THAT(Probe(4096 - 10, "SWAP-SPACE"), HasSubstr("swap area"));
  EXPECT_THAT(Probe(65536 - 10, "SWAPSPACE2"), HasSubstr("at byte 65526"));
}

TEST(SignaturesTest, VolumeManagersAndEncryption) {
  EXPECT_THAT(Probe(0, "LUKS\xba\xbe"), HasSubstr("LUKS"));
  EXPECT_THAT(Probe(512, "LABELONE"), HasSubstr("LVM2"));
  EXPECT_THAT(Probe(4096, "\xfc\x4e\x2b\xa9"), HasSubstr("md RAID 1.2"));
  EXPECT_THAT(Probe(0, "\xfc\x4e\x2b\xa9"), HasSubstr("md RAID 1.1"));
}

TEST(SignaturesTest, MdSuperblocksAtTheEnd) {
  constexpr uint64_t sectors = kImageBytes / 512;
  EXPECT_THAT(Probe(((sectors & ~uint64_t{127}) - 128) * 512, "\xfc\x4e\x2b\xa9"),
              HasSubstr("md RAID 0.90"));
  EXPECT_THAT(Probe(((sectors - 16) & ~uint64_t{7}) * 512, "\xfc\x4e\x2b\xa9"),
              HasSubstr("md RAID 1.0"));
}

TEST(SignaturesTest, PartitionTables) {
  EXPECT_THAT(Probe(512, "EFI PART"), HasSubstr("GPT"));
  // An MBR boot signature alone (a blank MBR) is not a partition table...
  EXPECT_EQ(Probe(510, "\x55\xaa"), "");
  // ...but one used entry is: entry 2's type byte at 446 + 16 + 4.
  std::string mbr(66, '\0');
  mbr[16 + 4] = 0x83;
  mbr[64] = '\x55';
  mbr[65] = '\xaa';
  EXPECT_THAT(Probe(446, mbr), HasSubstr("MBR partition table"));
}

TEST(SignaturesTest, FatIsNamedAsFatNotAsMbr) {
  std::string boot(512, '\0');
  boot.replace(82, 8, "FAT32   ");
  boot[446 + 4] = 0x12;  // boot code where an MBR has entries
  boot[510] = '\x55';
  boot[511] = '\xaa';
  EXPECT_THAT(Probe(0, boot), HasSubstr("FAT"));
}

TEST(SignaturesTest, DevicesShorterThanAnOffsetAreFine) {
  EXPECT_EQ(Probe(0, "", 1000), "");
  EXPECT_THAT(Probe(1080, "\x53\xef", 2048), HasSubstr("ext2/3/4"));
  EXPECT_EQ(Probe(0, "", 0), "");
}

}  // namespace
}  // namespace blkbench
