// Parsers for /proc/self/mountinfo and /proc/swaps, used by the wrong-disk guard to learn
// whether a block device is mounted or used as swap.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace blkbench {

// One line of /proc/<pid>/mountinfo (Documentation/filesystems/proc.rst, "3.5").
struct MountEntry {
  unsigned major = 0;  // st_dev of the mounted filesystem; btrfs reports an anonymous 0:N
  unsigned minor = 0;
  std::string mount_point;  // unescaped ("\040" -> ' ')
  std::string fs_type;
  std::string source;  // e.g. "/dev/loop3", unescaped
};

// Parses mountinfo text. InvalidArgument naming the line for a malformed line: a guard that
// cannot read the mount table must refuse, not guess.
absl::StatusOr<std::vector<MountEntry>> ParseMountInfo(absl::string_view text);

// One active swap area from /proc/swaps.
struct SwapEntry {
  std::string path;  // unescaped; may end in " (deleted)" for a deleted swap file
  std::string type;  // "partition" or "file"
};

// Parses /proc/swaps (a header line, then "Filename Type Size Used Priority" rows).
absl::StatusOr<std::vector<SwapEntry>> ParseSwaps(absl::string_view text);

// Undoes the kernel's octal escaping of ' ', '\t', '\n' and '\\' in paths (seq_escape /
// mangle_path: "\040" for a space).
std::string UnescapeOctal(absl::string_view text);

}  // namespace blkbench
