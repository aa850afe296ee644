// Read-only detection of on-disk signatures (filesystems, swap, RAID/LVM/LUKS/bcache members,
// partition tables) at their well-known offsets, for the wrong-disk guard.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"

namespace blkbench {

// Looks for a known signature on the device or file open as `fd` (only pread(2) is used; never
// writes), whose size is `size_bytes`. Returns a description naming what was found and where
// ("an ext2/3/4 filesystem (magic 0xEF53 at byte 1080)"), or "" if nothing is recognised.
// Checks the head of the device (ext2/3/4, XFS, btrfs, f2fs, swap for 4-64 KiB pages, LUKS,
// LVM2, md 1.1/1.2, bcache, NTFS, FAT, ISO 9660, GPT, MBR with a used partition entry) and
// its tail (md 0.90 and 1.0 superblocks). A device shorter than an offset simply lacks that
// signature. Errors only for a failed read.
//
// Why not libblkid: it knows many more formats but is not a blkbench dependency; these cover
// what a lab disk plausibly holds, and any match is a refusal, never a write.
absl::StatusOr<std::string> FindSignature(int fd, uint64_t size_bytes);

}  // namespace blkbench
