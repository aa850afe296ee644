// Signature table and probing; see signatures.h. Offsets and magics are those libblkid
// (util-linux libblkid/src/superblocks/*.c, partitions/*.c) and the kernel use.
#include "agent/device/signatures.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string_view>

#include "absl/strings/str_cat.h"

namespace blkbench {
namespace {

using namespace std::string_view_literals;

struct Signature {
  const char* what;
  uint64_t offset;
  std::string_view magic;
  const char* magic_text;  // as printed in the refusal
};

// Head-of-device signatures, most specific first (a FAT boot sector also ends in 0x55AA).
constexpr Signature kHeadSignatures[] = {
    {"an ext2/3/4 filesystem", 1080, "\x53\xef"sv, "0xEF53"},
    {"an XFS filesystem", 0, "XFSB"sv, "\"XFSB\""},
    {"a btrfs filesystem", 65600, "_BHRfS_M"sv, "\"_BHRfS_M\""},
    {"an f2fs filesystem", 1024, "\x10\x20\xf5\xf2"sv, "0xF2F52010"},
    {"a LUKS encrypted volume", 0, "LUKS\xba\xbe"sv, "\"LUKS\\xba\\xbe\""},
    {"an LVM2 physical volume", 512, "LABELONE"sv, "\"LABELONE\""},
    {"an LVM2 physical volume", 0, "LABELONE"sv, "\"LABELONE\""},
    {"an md RAID 1.1 member", 0, "\xfc\x4e\x2b\xa9"sv, "0xA92B4EFC"},
    {"an md RAID 1.2 member", 4096, "\xfc\x4e\x2b\xa9"sv, "0xA92B4EFC"},
    {"a bcache member", 4096 + 24,
     "\xc6\x85\x73\xf6\x4e\x1a\x45\xca\x82\x65\xf5\x7f\x48\xba\x6d\x81"sv, "bcache magic"},
    {"an NTFS filesystem", 3, "NTFS    "sv, "\"NTFS    \""},
    {"a FAT filesystem", 82, "FAT32   "sv, "\"FAT32   \""},
    {"a FAT filesystem", 54, "FAT16   "sv, "\"FAT16   \""},
    {"a FAT filesystem", 54, "FAT12   "sv, "\"FAT12   \""},
    {"an ISO 9660 filesystem", 32769, "CD001"sv, "\"CD001\""},
    // mkswap writes its signature in the last 10 bytes of the first page, whatever the page
    // size of the machine that made it.
    {"a swap area", 4096 - 10, "SWAPSPACE2"sv, "\"SWAPSPACE2\""},
    {"a swap area", 4096 - 10, "SWAP-SPACE"sv, "\"SWAP-SPACE\""},
    {"a swap area", 8192 - 10, "SWAPSPACE2"sv, "\"SWAPSPACE2\""},
    {"a swap area", 16384 - 10, "SWAPSPACE2"sv, "\"SWAPSPACE2\""},
    {"a swap area", 65536 - 10, "SWAPSPACE2"sv, "\"SWAPSPACE2\""},
    {"a GPT partition table", 512, "EFI PART"sv, "\"EFI PART\""},
};

constexpr uint64_t kHeadBytes = 65600 + 8;  // covers the furthest head signature (btrfs)
constexpr uint64_t kMbrEntries = 446;       // four 16-byte entries, then 0x55AA at 510
constexpr uint64_t kSector = 512;
constexpr std::string_view kMdMagic = "\xfc\x4e\x2b\xa9"sv;

// Reads up to `length` bytes at `offset`; fewer only at end of device.
absl::StatusOr<std::string> ReadAt(int fd, uint64_t offset, uint64_t length) {
  std::string buf(length, '\0');
  uint64_t done = 0;
  while (done < length) {
    ssize_t n = pread(fd, buf.data() + done, length - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return absl::ErrnoToStatus(errno, absl::StrCat("read at byte ", offset + done));
    if (n == 0) break;
    done += static_cast<uint64_t>(n);
  }
  buf.resize(done);
  return buf;
}

bool HasAt(const std::string& buf, uint64_t offset, std::string_view magic) {
  return offset + magic.size() <= buf.size() && buf.compare(offset, magic.size(), magic) == 0;
}

// A DOS partition table: boot signature plus at least one entry with a nonzero type byte.
bool HasMbrPartition(const std::string& head) {
  if (!HasAt(head, 510, "\x55\xaa"sv)) return false;
  for (uint64_t entry = 0; entry < 4; ++entry) {
    if (head[kMbrEntries + entry * 16 + 4] != 0) return true;
  }
  return false;
}

}  // namespace

absl::StatusOr<std::string> FindSignature(int fd, uint64_t size_bytes) {
  absl::StatusOr<std::string> head = ReadAt(fd, 0, std::min(kHeadBytes, size_bytes));
  if (!head.ok()) return head.status();
  for (const Signature& sig : kHeadSignatures) {
    if (HasAt(*head, sig.offset, sig.magic)) {
      return absl::StrCat(sig.what, " (", sig.magic_text, " at byte ", sig.offset, ")");
    }
  }
  if (HasMbrPartition(*head)) return std::string("an MBR partition table (0x55AA at byte 510)");

  // md superblocks kept at the end of the device (md/md.c: calc_dev_sboffset for 0.90,
  // super_1_load for 1.0).
  const uint64_t sectors = size_bytes / kSector;
  struct Tail {
    const char* what;
    uint64_t sector;
  };
  const Tail tails[] = {
      {"an md RAID 0.90 member", sectors >= 128 ? (sectors & ~uint64_t{127}) - 128 : 0},
      {"an md RAID 1.0 member", sectors >= 16 ? (sectors - 16) & ~uint64_t{7} : 0},
  };
  for (const Tail& tail : tails) {
    if (tail.sector == 0) continue;
    absl::StatusOr<std::string> block = ReadAt(fd, tail.sector * kSector, kMdMagic.size());
    if (!block.ok()) return block.status();
    if (HasAt(*block, 0, kMdMagic)) {
      return absl::StrCat(tail.what, " (0xA92B4EFC at byte ", tail.sector * kSector, ")");
    }
  }
  return std::string();
}

}  // namespace blkbench
