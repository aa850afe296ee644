// The fake null_blk configfs kernel (fake_null_blk.h).
#include "agent/device/fake_null_blk.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace blkbench::testing {

// Where a powered item's disk is, kept beside its attributes (not one of them: Write
// refuses it as an unknown attribute would be refused).
constexpr char kNodeFile[] = ".node";

FakeNullBlkKernel::FakeNullBlkKernel(NullBlkPaths paths) : paths_(std::move(paths)) {
  std::filesystem::create_directories(paths_.nullb());
  std::filesystem::create_directories(paths_.dev);
}

int FakeNullBlkKernel::Mkdir(const std::string& path) {
  if (mkdir(path.c_str(), 0755) != 0) return errno;
  for (const std::string& attr : NullBlkAttributes()) Put(path, attr, "0");
  Put(path, "power", "0");
  Put(path, "index", "0");
  return 0;
}

int FakeNullBlkKernel::Write(const std::string& path, absl::string_view value) {
  writes.push_back(absl::StrCat(std::filesystem::path(path).filename().string(), "=", value));
  if (fail_write == writes.size()) return EINVAL;
  const std::string item = std::filesystem::path(path).parent_path();
  const std::string attr = std::filesystem::path(path).filename();
  if (attr == kNodeFile || access(path.c_str(), F_OK) != 0) return ENOENT;  // not an attribute
  if (attr == "index") return EACCES;                                       // read-only
  const bool powered = Get(item, "power") == "1";
  if (attr != "power" && powered) return EBUSY;  // nullb_device_*_store on a live device
  if (attr == "power" && value == "1" && !powered) {
    // null_add_dev's checks, e.g. a zero queue depth.
    if (Get(item, "hw_queue_depth") == "0" && touched_.count(item + "/hw_queue_depth") > 0) {
      return EINVAL;
    }
    uint32_t index = 0;
    while (access(Node(index).c_str(), F_OK) == 0) ++index;
    Put(item, "index", absl::StrCat(index));
    Put(item, kNodeFile, Node(index));
    if (make_nodes) {
      uint64_t mib = 0;
      if (touched_.count(item + "/size") == 0 || !absl::SimpleAtoi(Get(item, "size"), &mib)) {
        mib = 0;
      }
      const int fd = open(Node(index).c_str(), O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0600);
      if (fd < 0) return errno;
      const int err = ftruncate(fd, static_cast<off_t>(mib << 20)) == 0 ? 0 : errno;
      close(fd);
      if (err != 0) return err;
    }
  } else if (attr == "power" && value == "0" && powered) {
    DropNode(item);
  }
  Put(item, attr, std::string(value));
  touched_.insert(path);
  return 0;
}

int FakeNullBlkKernel::Read(const std::string& path, std::string* value) {
  std::ifstream in(path);
  if (!in) return ENOENT;
  std::getline(in, *value);
  return 0;
}

int FakeNullBlkKernel::Rmdir(const std::string& path) {
  if (access(path.c_str(), F_OK) != 0) return ENOENT;
  DropNode(path);
  std::filesystem::remove_all(path);
  ++rmdirs;
  return 0;
}

bool FakeNullBlkKernel::IsBlockDevice(const std::string& path) {
  return access(path.c_str(), F_OK) == 0;
}

std::string FakeNullBlkKernel::Node(uint32_t index) const {
  return absl::StrCat(paths_.dev, "/nullb", index);
}

void FakeNullBlkKernel::Put(const std::string& item, const std::string& attr,
                            const std::string& v) {
  std::ofstream(absl::StrCat(item, "/", attr)) << v << "\n";
}

std::string FakeNullBlkKernel::Get(const std::string& item, const std::string& attr) {
  std::string v;
  Read(absl::StrCat(item, "/", attr), &v);
  return v;
}

void FakeNullBlkKernel::DropNode(const std::string& item) {
  const std::string node = Get(item, kNodeFile);
  if (!node.empty()) unlink(node.c_str());
  unlink(absl::StrCat(item, "/", kNodeFile).c_str());
}

}  // namespace blkbench::testing
