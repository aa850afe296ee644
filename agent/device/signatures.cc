// Signature probing with libblkid and the hand-kept table; see signatures.h. The table's
// offsets and magics are those libblkid (util-linux libblkid/src/superblocks/*.c,
// partitions/*.c) and the kernel use.
#include "agent/device/signatures.h"

#include <blkid.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <string_view>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

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

// What the table found and where ("0xEF53 at byte 1080"); `what` is empty for no match.
struct TableMatch {
  std::string what;
  std::string where;
};

absl::StatusOr<TableMatch> MatchTable(int fd, uint64_t size_bytes) {
  absl::StatusOr<std::string> head = ReadAt(fd, 0, std::min(kHeadBytes, size_bytes));
  if (!head.ok()) return head.status();
  for (const Signature& sig : kHeadSignatures) {
    if (HasAt(*head, sig.offset, sig.magic)) {
      return TableMatch{sig.what, absl::StrCat(sig.magic_text, " at byte ", sig.offset)};
    }
  }
  if (HasMbrPartition(*head)) return TableMatch{"an MBR partition table", "0x55AA at byte 510"};

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
      return TableMatch{tail.what, absl::StrCat("0xA92B4EFC at byte ", tail.sector * kSector)};
    }
  }
  return TableMatch{};
}

// libblkid's value `name` from the last probing step, "" if it has none. Values are
// NUL-terminated strings whose length counts the NUL.
std::string Value(blkid_probe probe, const char* name) {
  const char* data = nullptr;
  size_t len = 0;
  if (blkid_probe_lookup_value(probe, name, &data, &len) != 0 || data == nullptr) return "";
  return std::string(data, strnlen(data, len));
}

// How a refusal names a libblkid TYPE or PTTYPE: the common ones by their usual names, the
// rest as "<a/an> <type> <kind>".
std::string Described(const std::string& type, const std::string& kind) {
  struct Name {
    const char* type;
    const char* what;
  };
  static constexpr Name kNames[] = {
      {"swap", "a swap area"},
      {"LVM2_member", "an LVM2 physical volume"},
      {"LVM1_member", "an LVM1 physical volume"},
      {"linux_raid_member", "an md RAID member"},
      {"crypto_LUKS", "a LUKS encrypted volume"},
      {"bcache", "a bcache member"},
      {"xfs", "an XFS filesystem"},
      {"ntfs", "an NTFS filesystem"},
      {"vfat", "a FAT filesystem"},
      {"iso9660", "an ISO 9660 filesystem"},
      {"gpt", "a GPT partition table"},
      {"dos", "an MBR (dos) partition table"},
  };
  for (const Name& name : kNames) {
    if (type == name.type) return name.what;
  }
  const bool vowel =
      !type.empty() && std::string_view("aeiouAEIOU").find(type[0]) != std::string_view::npos;
  return absl::StrCat(vowel ? "an " : "a ", type, " ", kind);
}

// The noun for a superblock's USAGE (libblkid: filesystem, raid, crypto, other).
std::string UsageKind(const std::string& usage) {
  if (usage == "filesystem") return "filesystem";
  if (usage == "raid") return "RAID or volume-manager member";
  if (usage == "crypto") return "encrypted volume";
  return "signature";
}

// The description of what the last successful blkid_do_probe step found, "" for a step
// that set neither TYPE nor PTTYPE.
std::string DescribeStep(blkid_probe probe) {
  if (std::string type = Value(probe, "TYPE"); !type.empty()) {
    const std::string usage = Value(probe, "USAGE");
    std::string details = absl::StrCat("libblkid: TYPE=", type, ", USAGE=", usage);
    if (std::string offset = Value(probe, "SBMAGIC_OFFSET"); !offset.empty()) {
      absl::StrAppend(&details, ", magic at byte ", offset);
    }
    if (!Value(probe, "SBBADCSUM").empty()) absl::StrAppend(&details, ", bad checksum");
    return absl::StrCat(Described(type, UsageKind(usage)), " (", details, ")");
  }
  if (std::string pttype = Value(probe, "PTTYPE"); !pttype.empty()) {
    std::string details = absl::StrCat("libblkid: PTTYPE=", pttype);
    if (std::string offset = Value(probe, "PTMAGIC_OFFSET"); !offset.empty()) {
      absl::StrAppend(&details, ", magic at byte ", offset);
    }
    return absl::StrCat(Described(pttype, "partition table"), " (", details, ")");
  }
  return "";
}

// A failed libblkid call: its errno when it set one.
absl::Status LibblkidError(absl::string_view call) {
  const std::string what = absl::StrCat("libblkid ", call, " failed");
  return errno != 0 ? absl::ErrnoToStatus(errno, what) : absl::InternalError(what);
}

using ProbePtr = std::unique_ptr<std::remove_pointer_t<blkid_probe>, decltype(&blkid_free_probe)>;

}  // namespace

absl::StatusOr<std::vector<std::string>> ProbeWithLibblkid(int fd, uint64_t size_bytes) {
  errno = 0;
  ProbePtr probe(blkid_new_probe(), &blkid_free_probe);
  if (probe == nullptr) return LibblkidError("blkid_new_probe");
  errno = 0;
  if (blkid_probe_set_device(probe.get(), fd, 0, static_cast<blkid_loff_t>(size_bytes)) != 0) {
    return LibblkidError("blkid_probe_set_device");
  }
  errno = 0;
  if (blkid_probe_enable_superblocks(probe.get(), 1) != 0 ||
      blkid_probe_set_superblocks_flags(probe.get(), BLKID_SUBLKS_TYPE | BLKID_SUBLKS_USAGE |
                                                         BLKID_SUBLKS_MAGIC |
                                                         BLKID_SUBLKS_BADCSUM) != 0 ||
      blkid_probe_enable_partitions(probe.get(), 1) != 0 ||
      blkid_probe_set_partitions_flags(probe.get(), BLKID_PARTS_MAGIC | BLKID_PARTS_FORCE_GPT) !=
          0) {
    return LibblkidError("probe set-up");
  }
  // Each successful step is one signature of one chain (wipefs.c: read_offsets); 1 means
  // every chain is done.
  std::vector<std::string> found;
  int rc = 0;
  errno = 0;
  while ((rc = blkid_do_probe(probe.get())) == 0) {
    if (std::string description = DescribeStep(probe.get()); !description.empty()) {
      found.push_back(std::move(description));
    }
    errno = 0;
  }
  if (rc < 0) {
    return LibblkidError(absl::StrCat("blkid_do_probe (after ", found.size(), " signatures)"));
  }
  return found;
}

absl::StatusOr<std::string> FindSignatureInTable(int fd, uint64_t size_bytes) {
  absl::StatusOr<TableMatch> match = MatchTable(fd, size_bytes);
  if (!match.ok()) return match.status();
  if (match->what.empty()) return std::string();
  return absl::StrCat(match->what, " (", match->where, ")");
}

absl::StatusOr<std::string> FindSignature(int fd, uint64_t size_bytes) {
  if (size_bytes == 0) return std::string();
  absl::StatusOr<std::vector<std::string>> probed = ProbeWithLibblkid(fd, size_bytes);
  if (probed.ok() && !probed->empty()) return absl::StrJoin(*probed, " and ");
  absl::StatusOr<TableMatch> match = MatchTable(fd, size_bytes);
  if (!match.ok()) {
    if (probed.ok()) return match.status();
    return absl::Status(match.status().code(), absl::StrCat(match.status().message(), " (and ",
                                                            probed.status().message(), ")"));
  }
  if (match->what.empty()) return std::string();
  const std::string why =
      probed.ok() ? std::string("libblkid does not recognise it")
                  : absl::StrCat("libblkid could not probe: ", probed.status().message());
  return absl::StrCat(match->what, " (", match->where, "; by blkbench's own table, ", why, ")");
}

}  // namespace blkbench
