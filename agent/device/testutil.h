// Test helpers for agent/device: temporary directories, fake sysfs/procfs trees, running
// commands, and real loop devices that are always detached again (RAII).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "agent/device/sysfs.h"

namespace blkbench::testing {

// A fresh directory under $TMPDIR (or /tmp), removed recursively on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Writes `content` to `path`, creating missing parent directories; aborts the test on error.
void WriteFile(const std::string& path, const std::string& content);
std::string ReadFile(const std::string& path);
void MakeDirs(const std::string& path);
void Symlink(const std::string& target, const std::string& link);

// A fake sysfs/procfs pair under `root`: <root>/sys and <root>/proc.
SystemPaths FakePaths(const std::string& root);

// Creates a fake whole disk `name` with device number `dev` ("7:0") under paths.sysfs, the
// way the kernel lays it out: the device directory under devices/virtual/block, a
// class/block/<name> symlink, and dev/block/<dev>. Queue attributes get plausible defaults
// (scheduler "none [mq-deadline] kyber bfq", nr_requests 64, max_sectors_kb 1280,
// max_hw_sectors_kb 2048). Returns the device directory.
std::string MakeFakeDisk(const SystemPaths& paths, const std::string& name, const std::string& dev);

// Adds partition `name` with number `dev` to the fake disk directory `disk_dir`.
std::string MakeFakePartition(const SystemPaths& paths, const std::string& disk_dir,
                              const std::string& name, const std::string& dev);

// Runs argv (no shell) and returns its exit status (-1 if it could not run) and output.
struct CommandResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};
CommandResult Run(const std::vector<std::string>& argv);
bool HaveCommand(const std::string& name);

// A loop device over a sparse file in /dev/shm; detached (and the file removed) on
// destruction, whatever the test did. Create fails unless running as root with loop support.
class LoopDevice {
 public:
  static absl::StatusOr<std::unique_ptr<LoopDevice>> Create(uint64_t size_bytes,
                                                            bool partition_scan = false);
  ~LoopDevice();
  const std::string& path() const { return path_; }  // /dev/loopN
  std::string name() const;                          // loopN

  // Field 5 of /sys/block/<name>/stat: writes completed.
  uint64_t WritesCompleted() const;

 private:
  LoopDevice(std::string path, std::string backing) : path_(path), backing_(backing) {}
  std::string path_;
  std::string backing_;
};

// Unmounts `dir` on destruction.
class MountGuard {
 public:
  explicit MountGuard(std::string dir) : dir_(std::move(dir)) {}
  ~MountGuard();

 private:
  std::string dir_;
};

// Runs `swapoff path` on destruction.
class SwapGuard {
 public:
  explicit SwapGuard(std::string path) : path_(std::move(path)) {}
  ~SwapGuard();

 private:
  std::string path_;
};

}  // namespace blkbench::testing
