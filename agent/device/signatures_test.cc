// Tests for on-disk signature detection, on regular files laid out like the real formats:
// libblkid's probe, the hand-kept table, and how FindSignature combines them.
#include "agent/device/signatures.h"

#include <fcntl.h>
#include <unistd.h>

#include <functional>

#include "agent/device/testutil.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace blkbench {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

// Above libblkid's "tiny device" limit (1440 KiB), below which it skips RAID and LVM probers.
constexpr uint64_t kImageBytes = 4 << 20;

using Finder = std::function<absl::StatusOr<std::string>(int, uint64_t)>;

// Runs `find` on an image of `size` zero bytes with `magic` written at `offset`, telling it
// the image is `declared` bytes long (default: its real size).
std::string Probe(uint64_t offset, const std::string& magic, uint64_t size = kImageBytes,
                  const Finder& find = FindSignature, uint64_t declared = 0) {
  testing::TempDir tmp;
  std::string image(size, '\0');
  if (!magic.empty()) image.replace(offset, magic.size(), magic);
  const std::string path = tmp.path() + "/image";
  testing::WriteFile(path, image);
  int fd = open(path.c_str(), O_RDONLY);
  EXPECT_GE(fd, 0);
  absl::StatusOr<std::string> found = find(fd, declared != 0 ? declared : size);
  close(fd);
  EXPECT_TRUE(found.ok()) << found.status();
  return found.ok() ? *found : "error";
}

// The first page of a version-1 swap area of kImageBytes, as mkswap writes it: version 1
// and the last page number after the 1 KiB boot block, the magic at the end of the page.
std::string SwapHeader() {
  std::string page(4096, '\0');
  page[1024] = 1;
  const uint32_t last_page = kImageBytes / 4096 - 1;
  page[1028] = static_cast<char>(last_page & 0xff);
  page[1029] = static_cast<char>(last_page >> 8);
  page.replace(4096 - 10, 10, "SWAPSPACE2");
  return page;
}

std::string Table(uint64_t offset, const std::string& magic, uint64_t size = kImageBytes) {
  return Probe(offset, magic, size, FindSignatureInTable);
}

TEST(SignaturesTest, BlankDeviceHasNone) {
  EXPECT_EQ(Probe(0, ""), "");
  EXPECT_EQ(Table(0, ""), "");
}

TEST(SignaturesTest, LibblkidNamesTypeUsageAndMagicOffset) {
  // An ext2 superblock magic is all libblkid needs for ext2 (ext3/4 need feature flags).
  EXPECT_EQ(Probe(1080, "\x53\xef"),
            "an ext2 filesystem (libblkid: TYPE=ext2, USAGE=filesystem, magic at byte 1080)");
  EXPECT_EQ(Probe(512, testing::LvmPvLabel()),
            "an LVM2 physical volume (libblkid: TYPE=LVM2_member, USAGE=raid, magic at byte "
            "536)");
  EXPECT_EQ(Probe(0, SwapHeader()),
            "a swap area (libblkid: TYPE=swap, USAGE=other, magic at byte 4086)");
}

TEST(SignaturesTest, LibblkidCountsADamagedChecksum) {
  EXPECT_THAT(Probe(512, testing::LvmPvLabel(/*valid_crc=*/false)),
              HasSubstr("TYPE=LVM2_member, USAGE=raid, magic at byte 536, bad checksum"));
}

TEST(SignaturesTest, LibblkidReportsEverySignatureItFinds) {
  // A swap area over an old ext2 superblock: wipefs(8) would list both.
  testing::TempDir tmp;
  std::string image(kImageBytes, '\0');
  image.replace(0, 4096, SwapHeader());
  image.replace(1080, 2, "\x53\xef");
  testing::WriteFile(tmp.path() + "/image", image);
  int fd = open((tmp.path() + "/image").c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  absl::StatusOr<std::vector<std::string>> found = ProbeWithLibblkid(fd, kImageBytes);
  close(fd);
  ASSERT_TRUE(found.ok()) << found.status();
  EXPECT_THAT(*found, ElementsAre(HasSubstr("TYPE=swap"), HasSubstr("TYPE=ext2")));
}

TEST(SignaturesTest, LibblkidSeesAnEmptyDosTableTooWhichTheTableDoesNot) {
  // A boot signature without entries: libblkid calls it a dos table; refusing is the safe
  // side, and wipefs clears it.
  EXPECT_THAT(Probe(510, "\x55\xaa"), HasSubstr("MBR (dos) partition table (libblkid: PTTYPE=dos"));
  EXPECT_EQ(Table(510, "\x55\xaa"), "");
}

TEST(SignaturesTest, TheTableCatchesWhatLibblkidRejects) {
  // "LABELONE" without the rest of a label: libblkid sees nothing, the table an LVM2 PV.
  EXPECT_EQ(Probe(512, "LABELONE"),
            "an LVM2 physical volume (\"LABELONE\" at byte 512; by blkbench's own table, libblkid "
            "does not recognise it)");
}

TEST(SignaturesTest, TheTableDecidesWhenLibblkidCannotProbe) {
  // libblkid refuses an area larger than the file; the table reads what is there.
  const std::string found = Probe(512, "LABELONE", kImageBytes, FindSignature, 2 * kImageBytes);
  EXPECT_THAT(found, HasSubstr("by blkbench's own table, libblkid could not probe"));
  EXPECT_THAT(found, HasSubstr("blkid_probe_set_device"));
  EXPECT_EQ(Probe(0, "", kImageBytes, FindSignature, 2 * kImageBytes), "");
}

TEST(SignaturesTest, TableFilesystems) {
  EXPECT_THAT(Table(1080, "\x53\xef"), HasSubstr("ext2/3/4 filesystem (0xEF53 at byte 1080)"));
  EXPECT_THAT(Table(0, "XFSB"), HasSubstr("XFS"));
  EXPECT_THAT(Table(65600, "_BHRfS_M"), HasSubstr("btrfs"));
  EXPECT_THAT(Table(1024, "\x10\x20\xf5\xf2"), HasSubstr("f2fs"));
  EXPECT_THAT(Table(3, "NTFS    "), HasSubstr("NTFS"));
  EXPECT_THAT(Table(32769, "CD001"), HasSubstr("ISO 9660"));
}

TEST(SignaturesTest, TableSwapForEveryPageSize) {
  EXPECT_THAT(Table(4096 - 10, "SWAPSPACE2"), HasSubstr("swap area"));
  EXPECT_THAT(Table(4096 - 10, "SWAP-SPACE"), HasSubstr("swap area"));
  EXPECT_THAT(Table(65536 - 10, "SWAPSPACE2"), HasSubstr("at byte 65526"));
}

TEST(SignaturesTest, TableVolumeManagersAndEncryption) {
  EXPECT_THAT(Table(0, "LUKS\xba\xbe"), HasSubstr("LUKS"));
  EXPECT_THAT(Table(512, "LABELONE"), HasSubstr("LVM2"));
  EXPECT_THAT(Table(4096, "\xfc\x4e\x2b\xa9"), HasSubstr("md RAID 1.2"));
  EXPECT_THAT(Table(0, "\xfc\x4e\x2b\xa9"), HasSubstr("md RAID 1.1"));
}

TEST(SignaturesTest, TableMdSuperblocksAtTheEnd) {
  constexpr uint64_t sectors = kImageBytes / 512;
  EXPECT_THAT(Table(((sectors & ~uint64_t{127}) - 128) * 512, "\xfc\x4e\x2b\xa9"),
              HasSubstr("md RAID 0.90"));
  EXPECT_THAT(Table(((sectors - 16) & ~uint64_t{7}) * 512, "\xfc\x4e\x2b\xa9"),
              HasSubstr("md RAID 1.0"));
}

TEST(SignaturesTest, TablePartitionTables) {
  EXPECT_THAT(Table(512, "EFI PART"), HasSubstr("GPT"));
  // An MBR boot signature alone (a blank MBR) is not a partition table to the table...
  EXPECT_EQ(Table(510, "\x55\xaa"), "");
  // ...but one used entry is: entry 2's type byte at 446 + 16 + 4.
  std::string mbr(66, '\0');
  mbr[16 + 4] = 0x83;
  mbr[64] = '\x55';
  mbr[65] = '\xaa';
  EXPECT_THAT(Table(446, mbr), HasSubstr("MBR partition table"));
  EXPECT_THAT(Probe(446, mbr), HasSubstr("PTTYPE=dos"));
}

TEST(SignaturesTest, TableNamesFatAsFatNotAsMbr) {
  std::string boot(512, '\0');
  boot.replace(82, 8, "FAT32   ");
  boot[446 + 4] = 0x12;  // boot code where an MBR has entries
  boot[510] = '\x55';
  boot[511] = '\xaa';
  EXPECT_THAT(Table(0, boot), HasSubstr("FAT"));
  EXPECT_THAT(Probe(0, boot), Not(IsEmpty()));  // refused either way
}

TEST(SignaturesTest, DevicesShorterThanAnOffsetAreFine) {
  EXPECT_EQ(Probe(0, "", 1000), "");
  EXPECT_THAT(Probe(1080, "\x53\xef", 2048), HasSubstr("ext2"));
  EXPECT_THAT(Table(1080, "\x53\xef", 2048), HasSubstr("ext2/3/4"));
  EXPECT_EQ(Probe(0, "", 0), "");
  EXPECT_EQ(Table(0, "", 0), "");
}

}  // namespace
}  // namespace blkbench
