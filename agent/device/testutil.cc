// Test helpers for agent/device; see testutil.h.
#include "agent/device/testutil.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"

namespace blkbench::testing {

void MakeDirs(const std::string& path) {
  std::string partial;
  for (absl::string_view part : absl::StrSplit(path, '/', absl::SkipEmpty())) {
    absl::StrAppend(&partial, "/", part);
    if (mkdir(partial.c_str(), 0755) != 0 && errno != EEXIST) {
      ADD_FAILURE() << "mkdir " << partial << ": " << strerror(errno);
      return;
    }
  }
}

void WriteFile(const std::string& path, const std::string& content) {
  MakeDirs(path.substr(0, path.find_last_of('/')));
  FILE* f = fopen(path.c_str(), "w");
  if (f == nullptr) {
    ADD_FAILURE() << "fopen " << path << ": " << strerror(errno);
    return;
  }
  fwrite(content.data(), 1, content.size(), f);
  fclose(f);
}

std::string ReadFile(const std::string& path) {
  absl::StatusOr<std::string> text = ReadWholeFile(path);
  EXPECT_TRUE(text.ok()) << text.status();
  return text.ok() ? *text : "";
}

void Symlink(const std::string& target, const std::string& link) {
  MakeDirs(link.substr(0, link.find_last_of('/')));
  if (symlink(target.c_str(), link.c_str()) != 0) {
    ADD_FAILURE() << "symlink " << link << ": " << strerror(errno);
  }
}

SystemPaths FakePaths(const std::string& root) {
  SystemPaths paths;
  paths.sysfs = root + "/sys";
  paths.procfs = root + "/proc";
  MakeDirs(paths.sysfs);
  MakeDirs(paths.procfs);
  return paths;
}

namespace {

void WriteBlockAttributes(const std::string& dir, const std::string& dev) {
  WriteFile(dir + "/dev", dev + "\n");
  WriteFile(dir + "/size", "131072\n");
  WriteFile(dir + "/ro", "0\n");
  WriteFile(dir + "/stat", "0 0 0 0 0 0 0 0 0 0 0\n");
  MakeDirs(dir + "/holders");
}

}  // namespace

std::string MakeFakeDisk(const SystemPaths& paths, const std::string& name,
                         const std::string& dev) {
  const std::string dir = absl::StrCat(paths.sysfs, "/devices/virtual/block/", name);
  WriteBlockAttributes(dir, dev);
  const std::string queue = dir + "/queue";
  WriteFile(queue + "/scheduler", "none [mq-deadline] kyber bfq\n");
  WriteFile(queue + "/nr_requests", "64\n");
  WriteFile(queue + "/max_sectors_kb", "1280\n");
  WriteFile(queue + "/max_hw_sectors_kb", "2048\n");
  WriteFile(queue + "/logical_block_size", "512\n");
  WriteFile(queue + "/physical_block_size", "4096\n");
  WriteFile(queue + "/rotational", "0\n");
  Symlink(absl::StrCat("../../devices/virtual/block/", name),
          absl::StrCat(paths.sysfs, "/class/block/", name));
  Symlink(absl::StrCat("../../devices/virtual/block/", name),
          absl::StrCat(paths.sysfs, "/dev/block/", dev));
  return dir;
}

std::string MakeFakePartition(const SystemPaths& paths, const std::string& disk_dir,
                              const std::string& name, const std::string& dev) {
  const std::string disk = disk_dir.substr(disk_dir.find_last_of('/') + 1);
  const std::string dir = absl::StrCat(disk_dir, "/", name);
  WriteBlockAttributes(dir, dev);
  WriteFile(dir + "/partition", "1\n");
  Symlink(absl::StrCat("../../devices/virtual/block/", disk, "/", name),
          absl::StrCat(paths.sysfs, "/class/block/", name));
  Symlink(absl::StrCat("../../devices/virtual/block/", disk, "/", name),
          absl::StrCat(paths.sysfs, "/dev/block/", dev));
  return dir;
}

namespace {

void PutLittleEndian(std::string* buf, size_t offset, uint64_t value, size_t bytes) {
  for (size_t i = 0; i < bytes; ++i) (*buf)[offset + i] = static_cast<char>(value >> (8 * i));
}

// Reflected CRC-32 (polynomial 0xEDB88320) a bit at a time, from `seed`, not inverted at
// the end: the variant LVM2 stores in its labels.
uint32_t Lvm2Crc(absl::string_view data) {
  uint32_t crc = 0xf597a6cf;
  for (unsigned char byte : data) {
    crc ^= byte;
    for (int bit = 0; bit < 8; ++bit) crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
  }
  return crc;
}

}  // namespace

std::string LvmPvLabel(bool valid_crc) {
  constexpr size_t kLabelBytes = 512;
  constexpr size_t kCrcStart = 20;  // the CRC covers offset_xl to the end of the sector
  std::string label(kLabelBytes, '\0');
  label.replace(0, 8, "LABELONE");
  PutLittleEndian(&label, 8, 1, 8);    // sector_xl: this label is in sector 1
  PutLittleEndian(&label, 20, 32, 4);  // offset_xl: the PV header follows at byte 32
  label.replace(24, 8, "LVM2 001");
  label.replace(32, 32, "blkbenchTestPvUuid0123456789abcd");
  const uint32_t crc = Lvm2Crc(absl::string_view(label).substr(kCrcStart));
  PutLittleEndian(&label, 16, valid_crc ? crc : crc ^ 1u, 4);
  return label;
}

}  // namespace blkbench::testing
