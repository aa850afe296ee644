// Test helpers for agent/device; see testutil.h.
#include "agent/device/testutil.h"

#include <fcntl.h>
#include <ftw.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"

namespace blkbench::testing {

TempDir::TempDir() {
  const char* base = getenv("TMPDIR");
  std::string pattern = absl::StrCat(base != nullptr ? base : "/tmp", "/blkbench-device-XXXXXX");
  char* made = mkdtemp(pattern.data());
  if (made == nullptr) ADD_FAILURE() << "mkdtemp: " << strerror(errno);
  path_ = pattern;
}

TempDir::~TempDir() {
  // FTW_PHYS: never follow the fake trees' symlinks out of the directory.
  nftw(
      path_.c_str(), [](const char* p, const struct stat*, int, struct FTW*) { return remove(p); },
      16, FTW_DEPTH | FTW_PHYS);
}

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

CommandResult Run(const std::vector<std::string>& argv) {
  CommandResult result;
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) return result;
  pid_t pid = fork();
  if (pid < 0) return result;
  if (pid == 0) {
    dup2(pipe_fds[1], 1);
    dup2(pipe_fds[1], 2);
    int null_fd = open("/dev/null", O_RDONLY);
    if (null_fd >= 0) dup2(null_fd, 0);
    std::vector<char*> args;
    for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
    args.push_back(nullptr);
    execvp(args[0], args.data());
    _exit(127);
  }
  close(pipe_fds[1]);
  char buf[4096];
  ssize_t n;
  while ((n = read(pipe_fds[0], buf, sizeof(buf))) > 0 || (n < 0 && errno == EINTR)) {
    if (n > 0) result.output.append(buf, static_cast<size_t>(n));
  }
  close(pipe_fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

bool HaveCommand(const std::string& name) {
  for (const char* dir : {"/usr/sbin/", "/sbin/", "/usr/bin/", "/bin/"}) {
    if (access(absl::StrCat(dir, name).c_str(), X_OK) == 0) return true;
  }
  return false;
}

absl::StatusOr<std::unique_ptr<LoopDevice>> LoopDevice::Create(uint64_t size_bytes,
                                                               bool partition_scan) {
  if (geteuid() != 0) return absl::FailedPreconditionError("loop devices need root");
  if (!HaveCommand("losetup")) return absl::FailedPreconditionError("losetup is not installed");
  std::string backing = "/dev/shm/blkbench-loop-XXXXXX";
  int fd = mkstemp(backing.data());
  if (fd < 0) return absl::ErrnoToStatus(errno, "mkstemp in /dev/shm");
  int rc = ftruncate(fd, static_cast<off_t>(size_bytes));
  close(fd);
  if (rc != 0) {
    unlink(backing.c_str());
    return absl::ErrnoToStatus(errno, "ftruncate");
  }
  std::vector<std::string> argv = {"losetup", "-f", "--show"};
  if (partition_scan) argv.push_back("-P");
  argv.push_back(backing);
  CommandResult result = Run(argv);
  if (result.exit_code != 0) {
    unlink(backing.c_str());
    return absl::FailedPreconditionError(absl::StrCat("losetup failed: ", result.output));
  }
  return std::unique_ptr<LoopDevice>(
      new LoopDevice(std::string(absl::StripAsciiWhitespace(result.output)), backing));
}

LoopDevice::~LoopDevice() {
  // Retry briefly: udev or a just-closed holder may keep the device busy for a moment.
  for (int attempt = 0; attempt < 50; ++attempt) {
    if (Run({"losetup", "-d", path_}).exit_code == 0) break;
    usleep(100 * 1000);
  }
  unlink(backing_.c_str());
}

std::string LoopDevice::name() const { return path_.substr(path_.find_last_of('/') + 1); }

uint64_t LoopDevice::WritesCompleted() const {
  absl::StatusOr<std::string> stat = ReadAttribute(absl::StrCat("/sys/block/", name(), "/stat"));
  EXPECT_TRUE(stat.ok()) << stat.status();
  if (!stat.ok()) return 0;
  std::vector<absl::string_view> fields = absl::StrSplit(*stat, ' ', absl::SkipEmpty());
  uint64_t writes = 0;
  EXPECT_TRUE(fields.size() > 4 && absl::SimpleAtoi(fields[4], &writes)) << *stat;
  return writes;
}

MountGuard::~MountGuard() { Run({"umount", dir_}); }

SwapGuard::~SwapGuard() { Run({"swapoff", path_}); }

}  // namespace blkbench::testing
