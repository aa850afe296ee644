// File helpers for the kernel and initramfs caches and the per-VM directory: digests,
// a cross-process lock, atomic publication, and removal of what we made.
#ifndef BLKBENCH_COMMON_VM_FILES_H_
#define BLKBENCH_COMMON_VM_FILES_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace blkbench::vm {

// Lower-case hex SHA-256 of a file's contents, or of bytes.
absl::StatusOr<std::string> Sha256OfFile(const std::string& path);
std::string Sha256Hex(absl::string_view bytes);

// An exclusive flock(2) on `path` (created if missing), held until destruction. Two
// processes that lock the same file never run their critical sections at once.
class FileLock {
 public:
  // Blocks until the lock is held. Errors name the lock file.
  static absl::StatusOr<FileLock> Acquire(const std::string& path);
  FileLock(FileLock&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  FileLock& operator=(FileLock&&) = delete;
  FileLock(const FileLock&) = delete;
  ~FileLock();

 private:
  explicit FileLock(int fd) : fd_(fd) {}
  int fd_;
};

// mkdir -p with mode 0755 for what it creates.
absl::Status MakeDirs(const std::string& path);
// A new directory `parent/prefixXXXXXX` (mode 0700); returns its path.
absl::StatusOr<std::string> MakeTempDir(const std::string& parent, absl::string_view prefix);
// Removes a tree that this library made (never follows symlinks, stays on its file
// system). NotFound is not an error.
absl::Status RemoveTree(const std::string& path);
// Writes `data` to `path` atomically: a temporary file beside it, fsync, rename.
absl::Status WriteFileAtomic(const std::string& path, absl::string_view data, int mode = 0644);
// Whether `path` exists (any type; symlinks followed).
bool PathExists(const std::string& path);
// The last `max` bytes of a file ("" when it cannot be read): console and qemu logs.
std::string FileTail(const std::string& path, size_t max);

}  // namespace blkbench::vm

#endif  // BLKBENCH_COMMON_VM_FILES_H_
