// Read-only detection of on-disk signatures (filesystems, swap, RAID/LVM/LUKS/bcache members,
// partition tables) for the wrong-disk guard: libblkid's low-level probe, as wipefs(8) lists
// them, backed by a small hand-kept table of well-known offsets.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace blkbench {

// Looks for any known signature on the device or file open as `fd`, whose size is
// `size_bytes`. Never writes: libblkid only reads (it is never asked to wipe) and the table
// uses pread(2). Returns a description naming what was found and where, every signature
// joined by " and " ("a minix filesystem (libblkid: TYPE=minix, USAGE=filesystem, magic at
// byte 1040)"), or "" if nothing is recognised. A device of 0 bytes carries nothing.
//
// Order: libblkid first (ProbeWithLibblkid). The hand-kept table (FindSignatureInTable) is
// consulted when libblkid cannot probe (an error: its description then says so), and also
// when libblkid finds nothing. The second use is deliberate: libblkid verifies more than a
// magic (checksums, sector numbers, sizes), so a damaged LVM label or a lone ext4 magic that
// it rejects as not-a-filesystem is still a sign that the disk held data, and any match is
// only a refusal that wipefs(8) resolves, never a write. Errors only when the table's read
// fails too.
//
// Thread-safe: every call makes its own libblkid probe, and libblkid's low-level probing
// keeps its state in the probe (the probers' tables are constant).
absl::StatusOr<std::string> FindSignature(int fd, uint64_t size_bytes);

// Every signature libblkid finds on `fd` (offset 0, `size_bytes` long; 0 for the whole
// file or device) with the superblocks chain (TYPE, USAGE, MAGIC, and BADCSUM so that a
// signature with a damaged checksum still counts, marked "bad checksum") and the partitions
// chain (PTTYPE, PTMAGIC; GPT also without a protective MBR), iterated with blkid_do_probe
// as wipefs(8) does: one description per signature, in libblkid's order. Errors (naming
// the libblkid call) when a probe cannot be set up or a probing step fails.
absl::StatusOr<std::vector<std::string>> ProbeWithLibblkid(int fd, uint64_t size_bytes);

// The hand-kept table: the head of the device (ext2/3/4, XFS, btrfs, f2fs, swap for 4-64 KiB
// pages, LUKS, LVM2, md 1.1/1.2, bcache, NTFS, FAT, ISO 9660, GPT, MBR with a used partition
// entry) and its tail (md 0.90 and 1.0 superblocks), by magic alone. Returns the first
// match ("an ext2/3/4 filesystem (0xEF53 at byte 1080)") or "". A device shorter than an
// offset simply lacks that signature. Errors only for a failed read.
absl::StatusOr<std::string> FindSignatureInTable(int fd, uint64_t size_bytes);

}  // namespace blkbench
