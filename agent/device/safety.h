// The wrong-disk guard (RELIABILITY.md promise 6): a target must be on the agent's allowlist
// (re-resolved on every call), must not be in use or carry data, and is held with O_EXCL for
// the whole run. Every refusal names the device and the reason. Only reads, never writes.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "agent/device/sysfs.h"

namespace blkbench {

// One device an admin allows benchmarks on, preferably by a stable name
// (/dev/disk/by-id/wwn-..., /dev/disk/by-id/nvme-<serial>) rather than /dev/sdX.
struct AllowlistEntry {
  std::string path;
  std::string device_class;
};

// The canonical path of `requested` if it names the same file as an allowlist entry once both
// are resolved with realpath(3) now (so a by-id symlink that moved is followed, and a symlink
// to a device not on the list is refused). PermissionDenied naming `requested` (and what it
// resolves to) if no entry matches; NotFound if `requested` is itself an allowlist entry
// that does not resolve (the device is missing).
absl::StatusOr<std::string> ResolveAllowlisted(const std::vector<AllowlistEntry>& allowlist,
                                               const std::string& requested);

// For the block device `name` with device number `dev`: FailedPrecondition listing every
// reason it is in use — it or one of its partitions is mounted (mountinfo, by device number
// and by mount source, which catches btrfs's anonymous device numbers), is active swap
// (/proc/swaps, by device number) or holds an active swap file, has holders (device-mapper,
// LVM, md, bcache), has partitions, or is read-only. Reads only sysfs and procfs under
// `paths`. Note: only this mount namespace's mounts are visible; HoldExclusive's O_EXCL is the
// kernel-wide backstop.
absl::Status CheckNotInUse(const std::string& name, dev_t dev,
                           const SystemPaths& paths = SystemPaths());

// OK if `resolved_path` may be written by a benchmark: a regular file (allowlisted files are
// scratch files), or a block device that passes CheckNotInUse and carries no known signature
// (see FindSignature). FailedPrecondition naming the device and every reason otherwise,
// including for any other file type.
absl::Status CheckSafeToWrite(const std::string& resolved_path,
                              const SystemPaths& paths = SystemPaths());

// Exclusive use of a target for the duration of a run: for a block device an
// open(O_RDONLY | O_EXCL) descriptor, which makes the kernel refuse mounts, swapon, device-
// mapper and md claims (and is refused itself if one exists); for a regular file an flock.
// Closing releases it. Move-only. Benchmark I/O uses its own descriptors.
class ExclusiveHold {
 public:
  ExclusiveHold(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
  ExclusiveHold(ExclusiveHold&& other) noexcept;
  ExclusiveHold& operator=(ExclusiveHold&& other) noexcept;
  ExclusiveHold(const ExclusiveHold&) = delete;
  ExclusiveHold& operator=(const ExclusiveHold&) = delete;
  ~ExclusiveHold();

  const std::string& path() const { return path_; }
  int fd() const { return fd_; }  // -1 once moved from

 private:
  std::string path_;
  int fd_;
};

// Takes exclusive use of `path` (not followed if it is a symlink: pass a resolved path).
// FailedPrecondition naming the device if it is busy (mounted, swap, claimed, or another
// holder); the errno status for other failures.
absl::StatusOr<ExclusiveHold> HoldExclusive(const std::string& path);

// The whole guard in the order that leaves no window: ResolveAllowlisted, CheckSafeToWrite
// (for the detailed reasons), HoldExclusive, then the block-device checks again through the
// held descriptor, now that nothing new can claim the device. The agent calls this before a
// run's first write and keeps the hold until the run ends.
absl::StatusOr<ExclusiveHold> PrepareExclusiveWrite(const std::vector<AllowlistEntry>& allowlist,
                                                    const std::string& requested,
                                                    const SystemPaths& paths = SystemPaths());

}  // namespace blkbench
