// Helpers for reading and writing sysfs/procfs attribute files and for locating a block
// device's sysfs directory. Every path is built from an injectable root so tests can use a
// fake tree in a temporary directory.
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace blkbench {

// Where the kernel's pseudo filesystems are mounted. Tests point these at fake trees.
struct SystemPaths {
  std::string sysfs = "/sys";
  std::string procfs = "/proc";
};

// Reads a whole file. On failure returns the errno-derived status naming the path.
absl::StatusOr<std::string> ReadWholeFile(const std::string& path);

// Reads a whole file and strips leading and trailing ASCII whitespace (sysfs ends in "\n").
absl::StatusOr<std::string> ReadAttribute(const std::string& path);

// Reads an attribute holding one unsigned decimal number; InvalidArgument if it does not.
absl::StatusOr<uint64_t> ReadUintAttribute(const std::string& path);

// Writes `value` followed by "\n" in a single write(2), as `echo value > path` does. sysfs
// stores handlers validate the whole buffer at once, so a short write is an error here.
// Errors keep the kernel's errno (EINVAL for a refused value) and name the path and value.
absl::Status WriteAttribute(const std::string& path, absl::string_view value);

// The contents of queue/scheduler: "none [mq-deadline] kyber bfq" lists what the device
// offers with the active one in brackets (kernel: elv_iosched_show). A queue without elevator
// support prints a lone "none" without brackets; that token is then current and the only one
// available. InvalidArgument for more than one bracketed name or an unbalanced bracket.
struct SchedulerList {
  std::vector<std::string> available;
  std::string current;
};
absl::StatusOr<SchedulerList> ParseSchedulers(absl::string_view text);

// True if `name` can be a kernel block device name used as one sysfs path component
// ("loop0", "nvme0n1", "dm-3"): non-empty, no '/', not "." or "..", printable ASCII.
bool IsSafeKernelName(absl::string_view name);

// The canonical sysfs directory of the block device major:minor, found through
// <sysfs>/dev/block/M:m (e.g. /sys/devices/virtual/block/loop0). NotFound if there is none.
absl::StatusOr<std::string> BlockSysfsDir(const SystemPaths& paths, unsigned major, unsigned minor);

// The canonical sysfs directory of the block device named `kernel_name`, via
// <sysfs>/class/block/<name>.
absl::StatusOr<std::string> BlockSysfsDirByName(const SystemPaths& paths,
                                                const std::string& kernel_name);

// The sysfs directory that owns the request queue of the device at `device_dir`: the device
// itself for a whole disk, its parent disk for a partition (a directory with a `partition`
// attribute). Queue settings of a partition are those of its disk.
std::string QueueOwnerDir(const std::string& device_dir);

// Last path component ("/sys/devices/virtual/block/loop0" -> "loop0").
std::string Basename(const std::string& path);

// realpath(3) of `path`; the errno status ("resolve PATH: ...") if it does not resolve.
absl::StatusOr<std::string> RealPath(const std::string& path);

// A benchmark target as it is now: `path` resolved (symlinks such as by-id links
// followed) and its stat(2). NotFound naming `path` if it does not resolve.
struct ResolvedTarget {
  std::string resolved;
  struct stat st;
};
absl::StatusOr<ResolvedTarget> ResolveTarget(const std::string& path);

// True if `path` exists (any type, symlinks followed).
bool PathExists(const std::string& path);

// Names of the entries of directory `dir`, sorted, without "." and "..".
absl::StatusOr<std::vector<std::string>> ListDirectory(const std::string& dir);

}  // namespace blkbench
