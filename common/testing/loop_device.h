// Test helpers shared by unit and integration tests: a temporary directory, a file in
// /dev/shm and a real loop device over one, each removed (detached) when it goes out of
// scope whatever the test did.
#ifndef BLKBENCH_COMMON_TESTING_LOOP_DEVICE_H_
#define BLKBENCH_COMMON_TESTING_LOOP_DEVICE_H_

#include <array>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "common/testing/command.h"

namespace blkbench::testing {

// The file's text without trailing newlines; `fallback` when it cannot be opened.
std::string ReadFileOr(const std::string& path, const std::string& fallback = "");

// A fresh directory $TMPDIR/<tag>.XXXXXX (or under /tmp), removed recursively, without
// following symlinks, on destruction. path() is "" when it could not be made.
class TempDir {
 public:
  explicit TempDir(const std::string& tag = "blkbench");
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string File(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// A file of `size` zero bytes in /dev/shm; removed by the destructor.
class TempFile {
 public:
  // kAllocated (fallocate) backs every byte with real pages, so O_DIRECT reads hit
  // memory; kSparse (ftruncate) costs nothing until written.
  enum class Fill { kAllocated, kSparse };
  static absl::StatusOr<std::unique_ptr<TempFile>> Create(uint64_t size,
                                                          Fill fill = Fill::kAllocated);
  ~TempFile();
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  const std::string& path() const { return path_; }
  uint64_t size() const { return size_; }
  // Reads the whole file back (for checking what a write job wrote).
  absl::StatusOr<std::string> Contents() const;

 private:
  TempFile(std::string path, uint64_t size) : path_(std::move(path)), size_(size) {}
  std::string path_;
  uint64_t size_;
};

struct LoopOptions {
  bool partition_scan = false;  // losetup -P: partitions appear as loopNpM
  bool preallocate = false;     // a kAllocated backing file instead of a sparse one
};

// /dev/loopN over a TempFile (`losetup -f --show`), detached on destruction (retrying
// while udev or a just-closed holder keeps it busy).
class LoopDevice {
 public:
  // FailedPrecondition unless running as root with losetup and loop support.
  static absl::StatusOr<std::unique_ptr<LoopDevice>> Attach(uint64_t size_bytes,
                                                            const LoopOptions& options = {});
  // A sparse `size_mb` MiB device, or null when loop devices are unavailable (tests then
  // GTEST_SKIP).
  static std::unique_ptr<LoopDevice> Create(uint64_t size_mb);
  // Puts the queue's scheduler back as it was at Attach (a switch also drops any
  // scheduler tunables a test set), then detaches.
  ~LoopDevice();
  LoopDevice(const LoopDevice&) = delete;
  LoopDevice& operator=(const LoopDevice&) = delete;

  const std::string& path() const { return path_; }  // /dev/loopN
  std::string name() const;                          // loopN
  uint64_t size() const { return backing_->size(); }
  // /sys/block/<name>/queue/<attr>, "" when unreadable.
  std::string SysfsQueue(const std::string& attr) const;
  // A scheduler the device offers other than its current one, for tests that switch it:
  // bfq when the kernel has it (never a default), else kyber, else mq-deadline; "" if the
  // device offers only its current one. Kernels without bfq (or without the module
  // loaded) exist, so tests must not hard-code it.
  std::string OtherScheduler() const;
  // Writes completed (field 5 of /sys/block/<name>/stat); a test failure when unreadable.
  uint64_t WritesCompleted() const;
  // Fields 5 to 8 of /sys/block/<name>/stat: writes completed, writes merged, sectors
  // written, milliseconds spent writing (see SectorsWritten for "nothing was written").
  std::array<uint64_t, 4> WriteCounters() const;
  // Sectors written to the device so far (field 7 of its stat file): the evidence that
  // nothing was written. The write *count* is not: a flush carries no data but counts as a
  // write, and the kernel or another opener may issue one at any time.
  uint64_t SectorsWritten() const { return WriteCounters()[2]; }

  // Detaches the device and attaches a new sparse backing file of `size_bytes` at the same
  // /dev/loopN (`losetup /dev/loopN FILE`), as an admin re-pointing a loop device would.
  // FailedPrecondition if another user took /dev/loopN in between; the object then no
  // longer owns a device and its destructor detaches nothing.
  absl::Status ReattachNewBackingFile(uint64_t size_bytes);
  const std::string& backing_path() const { return backing_->path(); }

 private:
  LoopDevice(std::unique_ptr<TempFile> backing, std::string path)
      : backing_(std::move(backing)), path_(std::move(path)) {}
  // The active scheduler ("none", "bfq", ...) of `sysfs_scheduler`'s "a [b] c" text.
  static std::string ActiveScheduler(const std::string& sysfs_scheduler);
  // losetup -d, retried while udev or a just-closed holder keeps the device busy.
  bool Detach();
  std::unique_ptr<TempFile> backing_;
  std::string path_;
  // The scheduler the queue had when attached. A loop device's queue outlives the
  // detach, so whatever a test set there would be the next user's: put back on destroy.
  std::string original_scheduler_;
  bool attached_ = true;  // false once a re-attach lost the device to another user
};

}  // namespace blkbench::testing

#endif  // BLKBENCH_COMMON_TESTING_LOOP_DEVICE_H_
