// Device identity for the wrong-disk guard: what an allowlisted target *is*, not just what its
// path resolves to, recorded when the agent registers and re-checked before every run, so a
// different disk under the same name (a swapped drive, a loop device re-attached to another
// file, a scratch file replaced by another) is refused instead of written.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "agent/device/sysfs.h"

namespace blkbench {

// A target as it was when read. Fields that do not apply (or that sysfs does not have) are
// empty or zero; IdentityChange says which differences count.
struct DeviceIdentity {
  std::string path;      // as asked (the allowlist's spelling)
  std::string resolved;  // realpath(3) when read
  bool is_block = false;

  // Block devices: the kernel's names and geometry, from sysfs.
  std::string kernel_name;  // "loop1", "nvme0n1p2"
  uint32_t major = 0;
  uint32_t minor = 0;
  uint64_t size_bytes = 0;
  uint32_t logical_block_size = 0;
  uint64_t diskseq = 0;  // `diskseq` (Linux 5.15+): new for every new disk or medium
  // The stable hardware identity, where sysfs has it (of the disk, for a partition):
  // `wwid` or `device/wwid`, `device/serial` or `serial`, `device/model`, and the names in
  // /dev/disk/by-id that resolve to the device, sorted.
  std::string wwid;
  std::string serial;
  std::string model;
  std::vector<std::string> by_id;

  // Loop devices (kernel name loopN): what they are attached to. The backing file's device
  // and inode come from LOOP_GET_STATUS64 (lo_device, lo_inode), so a file put in place of
  // the original under the same path is still told apart. `backing_file` is "" detached.
  bool is_loop = false;
  std::string backing_file;  // sysfs loop/backing_file
  uint64_t backing_device = 0;
  uint64_t backing_inode = 0;
  uint64_t loop_offset = 0;
  uint64_t loop_sizelimit = 0;

  // Regular files: st_dev, st_ino (and size_bytes above).
  uint64_t file_device = 0;
  uint64_t file_inode = 0;
};

// Where ReadDeviceIdentity looks. Tests point these at fake trees.
struct IdentitySources {
  SystemPaths system;
  std::string by_id_dir = "/dev/disk/by-id";
};

// The identity of the target at `path` now. `path` may be a symlink (a by-id link): it is
// resolved, and `path` is kept as given. A block device is opened read-only only to ask a
// loop device for its status; nothing is written. Errors: NotFound if `path` does not
// resolve, InvalidArgument for a file that is neither a block device nor a regular file,
// and the failing read (naming the file) otherwise.
absl::StatusOr<DeviceIdentity> ReadDeviceIdentity(const std::string& path,
                                                  const IdentitySources& sources = {});

// The sysfs part of a block device's identity, for the device whose sysfs directory is
// `device_dir` (see BlockSysfsDir): kernel_name, major:minor, size, logical block size,
// diskseq, wwid, serial, model and, for a loop device, backing_file, loop_offset and
// loop_sizelimit. `dev`, `size` and the queue's logical block size are required, the rest
// optional. path, resolved, by_id and the backing file's device and inode are left empty.
absl::StatusOr<DeviceIdentity> ReadBlockIdentity(const std::string& device_dir);

// "" if `current` is the target `recorded` describes; otherwise one message naming the
// device (recorded.path) and everything that changed, e.g. "/dev/loop1: backing file
// changed from /dev/shm/a (inode 12) to /dev/shm/b (inode 34); size changed from 64 MiB to
// 32 MiB; refusing to run on it until the agent is restarted". Every field must be equal
// (a WWID or serial that appears or vanishes counts), so a disk re-enumerated under another
// kernel name is refused too (a restart records it again). Two exceptions: diskseq is
// compared only when both sides have one, and never for a loop device, whose backing file
// stands for the medium (every attach bumps it, also of the same file); by-id names count
// as changed only when both sides have some and they share none (udev may briefly remove
// and re-add them).
std::string IdentityChange(const DeviceIdentity& recorded, const DeviceIdentity& current);

// What each allowlisted device was when the agent first registered it, for runs to re-check.
// Thread-safe: registration (the agent's session thread) and runs (a thread each) call it
// concurrently.
//
// The first identity registered for a path is kept for the life of the process: a later
// registration (after a reconnect) that finds something else does not re-record it, so a
// network blip cannot turn a swapped disk into an accepted one. A device that could not be
// read at its latest registration (missing, or changed) is not offered, and runs on it are
// refused until a registration offers it again.
class DeviceIdentityRegistry {
 public:
  // Registration of the allowlisted `path`, whose identity was just read as `current`.
  // OK if it may be offered: recorded on first sight, else equal to the recording.
  // FailedPrecondition with the IdentityChange message if it is now something else;
  // `current`'s own error if it could not be read.
  absl::Status Register(const std::string& path, const absl::StatusOr<DeviceIdentity>& current)
      ABSL_LOCKS_EXCLUDED(mu_);

  // Before a run on `path`: OK if it was offered at its latest registration and `current`
  // is what was recorded; FailedPrecondition naming the device and why otherwise (never
  // registered, not offered and why, or what changed).
  absl::Status Check(const std::string& path, const DeviceIdentity& current) const
      ABSL_LOCKS_EXCLUDED(mu_);

 private:
  struct Entry {
    std::optional<DeviceIdentity> recorded;
    absl::Status offered;  // the latest Register's answer
  };
  mutable absl::Mutex mu_;
  std::map<std::string, Entry> entries_ ABSL_GUARDED_BY(mu_);
};

}  // namespace blkbench
