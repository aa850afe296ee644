// Reading and writing sysfs/procfs attribute files; see sysfs.h.
#include "agent/device/sysfs.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <memory>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace blkbench {
namespace {

// Closes a file descriptor on scope exit.
class FdCloser {
 public:
  explicit FdCloser(int fd) : fd_(fd) {}
  FdCloser(const FdCloser&) = delete;
  FdCloser& operator=(const FdCloser&) = delete;
  ~FdCloser() {
    if (fd_ >= 0) close(fd_);
  }

 private:
  int fd_;
};

}  // namespace

absl::StatusOr<std::string> ReadWholeFile(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return absl::ErrnoToStatus(errno, absl::StrCat("open ", path));
  FdCloser closer(fd);
  std::string out;
  char buf[8192];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof(buf));
    if (n < 0) {
      if (errno == EINTR) continue;
      return absl::ErrnoToStatus(errno, absl::StrCat("read ", path));
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

absl::StatusOr<std::string> ReadAttribute(const std::string& path) {
  absl::StatusOr<std::string> text = ReadWholeFile(path);
  if (!text.ok()) return text.status();
  absl::StripAsciiWhitespace(&*text);
  return text;
}

absl::StatusOr<uint64_t> ReadUintAttribute(const std::string& path) {
  absl::StatusOr<std::string> text = ReadAttribute(path);
  if (!text.ok()) return text.status();
  uint64_t value = 0;
  if (!absl::SimpleAtoi(*text, &value)) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": expected an unsigned number, found \"", *text, "\""));
  }
  return value;
}

absl::Status WriteAttribute(const std::string& path, absl::string_view value) {
  // O_TRUNC matches the shell's `>`: ignored by sysfs, and makes fake trees behave like it.
  int fd = open(path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return absl::ErrnoToStatus(errno, absl::StrCat("open ", path, " for writing"));
  FdCloser closer(fd);
  std::string line = absl::StrCat(value, "\n");
  ssize_t n;
  do {
    n = write(fd, line.data(), line.size());
  } while (n < 0 && errno == EINTR);
  if (n < 0) {
    return absl::ErrnoToStatus(errno, absl::StrCat("write \"", value, "\" to ", path));
  }
  if (static_cast<size_t>(n) != line.size()) {
    return absl::DataLossError(absl::StrCat("short write of \"", value, "\" to ", path));
  }
  return absl::OkStatus();
}

absl::StatusOr<SchedulerList> ParseSchedulers(absl::string_view text) {
  SchedulerList list;
  for (absl::string_view token :
       absl::StrSplit(text, absl::ByAnyChar(" \t\n"), absl::SkipEmpty())) {
    bool open = absl::StartsWith(token, "[");
    bool close = absl::EndsWith(token, "]");
    if (open != close || (open && token.size() < 3)) {
      return absl::InvalidArgumentError(
          absl::StrCat("malformed scheduler list \"", absl::StripAsciiWhitespace(text), "\""));
    }
    std::string name(open ? token.substr(1, token.size() - 2) : token);
    if (open) {
      if (!list.current.empty()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "scheduler list \"", absl::StripAsciiWhitespace(text), "\" marks two as current"));
      }
      list.current = name;
    }
    list.available.push_back(std::move(name));
  }
  // elv_iosched_show prints a lone "none" (no brackets) for queues without elevator support.
  if (list.current.empty() && list.available.size() == 1) list.current = list.available[0];
  return list;
}

bool IsSafeKernelName(absl::string_view name) {
  if (name.empty() || name == "." || name == ".." || name.size() > NAME_MAX) return false;
  return std::all_of(name.begin(), name.end(),
                     [](char c) { return c > ' ' && c < 0x7f && c != '/'; });
}

absl::StatusOr<std::string> RealPath(const std::string& path) {
  std::unique_ptr<char, decltype(&free)> resolved(realpath(path.c_str(), nullptr), &free);
  if (resolved == nullptr) return absl::ErrnoToStatus(errno, absl::StrCat("resolve ", path));
  return std::string(resolved.get());
}

absl::StatusOr<ResolvedTarget> ResolveTarget(const std::string& path) {
  std::unique_ptr<char, decltype(&free)> resolved(realpath(path.c_str(), nullptr), &free);
  if (resolved == nullptr) {
    return absl::NotFoundError(
        absl::StrCat(path, " does not resolve to a device or file: ", strerror(errno)));
  }
  ResolvedTarget t;
  t.resolved = resolved.get();
  if (stat(t.resolved.c_str(), &t.st) != 0) {
    return absl::ErrnoToStatus(errno, absl::StrCat("stat ", t.resolved));
  }
  return t;
}

absl::StatusOr<std::string> BlockSysfsDir(const SystemPaths& paths, unsigned major,
                                          unsigned minor) {
  std::string link = absl::StrCat(paths.sysfs, "/dev/block/", major, ":", minor);
  absl::StatusOr<std::string> dir = RealPath(link);
  if (!dir.ok()) {
    return absl::NotFoundError(absl::StrCat("no block device ", major, ":", minor, " in ",
                                            paths.sysfs, " (", dir.status().message(), ")"));
  }
  return dir;
}

absl::StatusOr<std::string> BlockSysfsDirByName(const SystemPaths& paths,
                                                const std::string& kernel_name) {
  if (!IsSafeKernelName(kernel_name)) {
    return absl::InvalidArgumentError(
        absl::StrCat("\"", kernel_name, "\" is not a block device name"));
  }
  absl::StatusOr<std::string> dir =
      RealPath(absl::StrCat(paths.sysfs, "/class/block/", kernel_name));
  if (!dir.ok()) {
    return absl::NotFoundError(absl::StrCat("no block device named ", kernel_name, " in ",
                                            paths.sysfs, " (", dir.status().message(), ")"));
  }
  return dir;
}

std::string QueueOwnerDir(const std::string& device_dir) {
  if (PathExists(device_dir + "/partition")) {
    return device_dir.substr(0, device_dir.find_last_of('/'));
  }
  return device_dir;
}

std::string Basename(const std::string& path) {
  absl::string_view view = path;
  while (view.size() > 1 && view.back() == '/') view.remove_suffix(1);
  size_t slash = view.find_last_of('/');
  return std::string(slash == absl::string_view::npos ? view : view.substr(slash + 1));
}

bool PathExists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

absl::StatusOr<std::vector<std::string>> ListDirectory(const std::string& dir) {
  struct DirCloser {
    void operator()(DIR* d) const { closedir(d); }
  };
  std::unique_ptr<DIR, DirCloser> d(opendir(dir.c_str()));
  if (d == nullptr) return absl::ErrnoToStatus(errno, absl::StrCat("open directory ", dir));
  std::vector<std::string> names;
  errno = 0;
  while (struct dirent* entry = readdir(d.get())) {
    absl::string_view name = entry->d_name;
    if (name != "." && name != "..") names.emplace_back(name);
  }
  if (errno != 0) return absl::ErrnoToStatus(errno, absl::StrCat("read directory ", dir));
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace blkbench
