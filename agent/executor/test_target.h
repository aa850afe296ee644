// Test targets for executor tests: a sized file in /dev/shm and a loop device over one
// (created with losetup, always detached by the destructor).
#ifndef BLKBENCH_AGENT_EXECUTOR_TEST_TARGET_H_
#define BLKBENCH_AGENT_EXECUTOR_TEST_TARGET_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"

namespace blkbench {

// A zero-filled regular file; removed by the destructor.
class TempFile {
 public:
  static absl::StatusOr<std::unique_ptr<TempFile>> Create(uint64_t size);
  ~TempFile();
  const std::string& path() const { return path_; }
  uint64_t size() const { return size_; }
  // Reads the whole file back (for checking what a write job wrote).
  absl::StatusOr<std::string> Contents() const;

 private:
  TempFile(std::string path, uint64_t size) : path_(std::move(path)), size_(size) {}
  std::string path_;
  uint64_t size_;
};

// /dev/loopN over a TempFile (`losetup -f --show`).
class LoopDevice {
 public:
  static absl::StatusOr<std::unique_ptr<LoopDevice>> Attach(uint64_t size);
  ~LoopDevice();
  const std::string& path() const { return path_; }
  uint64_t size() const { return backing_->size(); }

 private:
  LoopDevice(std::unique_ptr<TempFile> backing, std::string path)
      : backing_(std::move(backing)), path_(std::move(path)) {}
  std::unique_ptr<TempFile> backing_;
  std::string path_;
};

}  // namespace blkbench

#endif  // BLKBENCH_AGENT_EXECUTOR_TEST_TARGET_H_
