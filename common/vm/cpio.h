// A writer of the "newc" cpio format the kernel unpacks as an initramfs
// (Documentation/driver-api/early-userspace/buffer-format.rst), uncompressed.
#ifndef BLKBENCH_COMMON_VM_CPIO_H_
#define BLKBENCH_COMMON_VM_CPIO_H_

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"

namespace blkbench::vm {

// Appends entries to an archive in memory. Paths are relative ("bin/busybox"); parents
// must be added before their children, as the kernel creates entries in order. Every
// entry has uid/gid 0 and mtime 0, so the same inputs give the same bytes.
class CpioWriter {
 public:
  void AddDirectory(absl::string_view path, uint32_t perm = 0755);
  void AddFile(absl::string_view path, absl::string_view data, uint32_t perm = 0644);
  void AddSymlink(absl::string_view path, absl::string_view target);
  void AddCharDevice(absl::string_view path, uint32_t perm, uint32_t major, uint32_t minor);
  // Appends the trailer and returns the archive; the writer is then empty again.
  std::string Finish();

 private:
  void Add(absl::string_view path, uint32_t mode, absl::string_view data, uint32_t rdev_major,
           uint32_t rdev_minor);

  std::string out_;
  uint32_t next_ino_ = 1;
};

}  // namespace blkbench::vm

#endif  // BLKBENCH_COMMON_VM_CPIO_H_
