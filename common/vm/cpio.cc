// newc cpio: a 110-byte ASCII header ("070701" and 13 eight-digit hex fields), the name
// with its NUL, padding to 4 bytes, the data, padding to 4 bytes.
#include "common/vm/cpio.h"

#include <sys/stat.h>

#include <cstdio>

namespace blkbench::vm {
namespace {

void Pad4(std::string& out) { out.append((4 - out.size() % 4) % 4, '\0'); }

}  // namespace

void CpioWriter::Add(absl::string_view path, uint32_t mode, absl::string_view data,
                     uint32_t rdev_major, uint32_t rdev_minor) {
  const bool trailer = path == "TRAILER!!!";
  const uint32_t fields[13] = {
      trailer ? 0 : next_ino_++,
      mode,
      0,  // uid
      0,  // gid
      S_ISDIR(mode) ? 2u : 1u,
      0,  // mtime
      static_cast<uint32_t>(data.size()),
      0,  // devmajor
      0,  // devminor
      rdev_major,
      rdev_minor,
      static_cast<uint32_t>(path.size() + 1),
      0,  // check
  };
  out_ += "070701";
  for (uint32_t f : fields) {
    char hex[9];
    std::snprintf(hex, sizeof(hex), "%08X", f);
    out_.append(hex, 8);
  }
  out_.append(path.data(), path.size());
  out_.push_back('\0');
  Pad4(out_);
  out_.append(data.data(), data.size());
  Pad4(out_);
}

void CpioWriter::AddDirectory(absl::string_view path, uint32_t perm) {
  Add(path, S_IFDIR | perm, {}, 0, 0);
}

void CpioWriter::AddFile(absl::string_view path, absl::string_view data, uint32_t perm) {
  Add(path, S_IFREG | perm, data, 0, 0);
}

void CpioWriter::AddSymlink(absl::string_view path, absl::string_view target) {
  Add(path, S_IFLNK | 0777, target, 0, 0);
}

void CpioWriter::AddCharDevice(absl::string_view path, uint32_t perm, uint32_t major,
                               uint32_t minor) {
  Add(path, S_IFCHR | perm, {}, major, minor);
}

std::string CpioWriter::Finish() {
  Add("TRAILER!!!", 0, {}, 0, 0);
  std::string out = std::move(out_);
  out_.clear();
  next_ino_ = 1;
  return out;
}

}  // namespace blkbench::vm
