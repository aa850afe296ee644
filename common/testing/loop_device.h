// Test helpers shared by unit and integration tests: a temporary directory and a real
// loop device backed by a file in /dev/shm, both removed when they go out of scope.
#ifndef BLKBENCH_COMMON_TESTING_LOOP_DEVICE_H_
#define BLKBENCH_COMMON_TESTING_LOOP_DEVICE_H_

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

namespace blkbench::testing {

// Runs a shell command; returns its stdout (trailing newline removed) and exit status.
inline int RunCommand(const std::string& cmd, std::string* out = nullptr) {
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return -1;
  std::string text;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), p)) > 0) text.append(buf, n);
  const int status = pclose(p);
  while (!text.empty() && text.back() == '\n') text.pop_back();
  if (out) *out = text;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

inline std::string ReadFileOr(const std::string& path, const std::string& fallback = "") {
  std::ifstream in(path);
  if (!in) return fallback;
  std::stringstream ss;
  ss << in.rdbuf();
  std::string s = ss.str();
  while (!s.empty() && s.back() == '\n') s.pop_back();
  return s;
}

class TempDir {
 public:
  explicit TempDir(const std::string& tag = "blkbench") {
    std::string tmpl = (std::filesystem::temp_directory_path() / (tag + ".XXXXXX")).string();
    path_ = mkdtemp(tmpl.data()) ? tmpl : "";
  }
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string File(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// A loop device over a sparse file in /dev/shm. Create() returns null when loop
// devices are unavailable (tests then GTEST_SKIP).
class LoopDevice {
 public:
  static std::unique_ptr<LoopDevice> Create(uint64_t size_mb) {
    static int counter = 0;
    std::string backing = "/dev/shm/blkbench-test." + std::to_string(getpid()) + "." +
                          std::to_string(counter++) + ".img";
    if (RunCommand("truncate -s " + std::to_string(size_mb) + "M " + backing) != 0) return nullptr;
    std::string dev;
    if (RunCommand("losetup -f --show " + backing + " 2>/dev/null", &dev) != 0 || dev.empty()) {
      std::filesystem::remove(backing);
      return nullptr;
    }
    return std::unique_ptr<LoopDevice>(new LoopDevice(dev, backing));
  }
  ~LoopDevice() {
    RunCommand("losetup -d " + path_ + " 2>/dev/null");
    std::error_code ec;
    std::filesystem::remove(backing_, ec);
  }
  LoopDevice(const LoopDevice&) = delete;
  LoopDevice& operator=(const LoopDevice&) = delete;

  const std::string& path() const { return path_; }     // /dev/loopN
  std::string name() const { return path_.substr(5); }  // loopN
  std::string SysfsQueue(const std::string& attr) const {
    return ReadFileOr("/sys/block/" + name() + "/queue/" + attr);
  }
  // Writes completed (field 5 of /sys/block/X/stat).
  uint64_t WritesCompleted() const {
    std::istringstream in(ReadFileOr("/sys/block/" + name() + "/stat"));
    uint64_t v[5] = {};
    for (auto& x : v) in >> x;
    return v[4];
  }

 private:
  LoopDevice(std::string path, std::string backing)
      : path_(std::move(path)), backing_(std::move(backing)) {}
  std::string path_;
  std::string backing_;
};

}  // namespace blkbench::testing

#endif  // BLKBENCH_COMMON_TESTING_LOOP_DEVICE_H_
