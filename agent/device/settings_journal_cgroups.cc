// Removal of journaled cgroups: leftover tasks moved out, then the directory removed
// (what `cgdelete` does; kernel: cgroup_rmdir refuses a populated cgroup with EBUSY); and
// of journaled configfs items (null_blk devices): powered off, then removed.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "agent/device/settings_journal.h"

namespace blkbench {
namespace {

// A group whose last task is still exiting stays populated for a moment after the task was
// reaped (its css_set is released asynchronously); retry that long before giving up.
constexpr int kBusyAttempts = 10;
constexpr std::chrono::milliseconds kBusyPause{20};

// Writes one task id into a cgroup's tasks/cgroup.procs file: 0 or the errno.
int WriteTaskId(const std::string& path, absl::string_view id) {
  const int fd = open(path.c_str(), O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return errno;
  const std::string line = absl::StrCat(id, "\n");
  ssize_t n;
  do {
    n = write(fd, line.data(), line.size());
  } while (n < 0 && errno == EINTR);
  const int err = n < 0 ? errno : 0;
  close(fd);
  return err;
}

// Moves every task listed in the group to dir.evacuate_to. ESRCH: it exited meanwhile.
void Evacuate(const CgroupDir& dir, std::vector<std::string>& errors) {
  absl::StatusOr<std::string> listed = ReadWholeFile(absl::StrCat(dir.path, "/", dir.tasks_file));
  if (!listed.ok()) {
    errors.emplace_back(listed.status().message());
    return;
  }
  const std::string target = absl::StrCat(dir.evacuate_to, "/", dir.tasks_file);
  for (absl::string_view id : absl::StrSplit(*listed, '\n', absl::SkipWhitespace())) {
    id = absl::StripAsciiWhitespace(id);
    uint32_t unused;
    if (!absl::SimpleAtoi(id, &unused)) {
      errors.push_back(
          absl::StrCat(dir.path, "/", dir.tasks_file, ": not a task id: \"", id, "\""));
      continue;
    }
    const int err = WriteTaskId(target, id);
    if (err != 0 && err != ESRCH) {
      errors.push_back(absl::StrCat("moving task ", id, " to ", target, ": ", strerror(err)));
    }
  }
}

}  // namespace

absl::Status RemoveCgroupDir(const CgroupDir& dir, const RemoveDirFn& remove_dir) {
  for (int attempt = 1;; ++attempt) {
    struct stat st;
    if (lstat(dir.path.c_str(), &st) != 0 && errno == ENOENT) return absl::OkStatus();
    std::vector<std::string> errors;
    // The shared parent never holds jobs; whatever lives there is not ours to move.
    if (!dir.shared) Evacuate(dir, errors);
    const int err = remove_dir(dir.path);
    if (err == 0 || err == ENOENT) return absl::OkStatus();
    const bool busy = err == EBUSY || err == ENOTEMPTY;
    if (busy && dir.shared) return absl::OkStatus();  // another run's groups are still in it
    if (busy && attempt < kBusyAttempts) {
      std::this_thread::sleep_for(kBusyPause);
      continue;
    }
    errors.push_back(absl::StrCat("removing cgroup ", dir.path, ": ", strerror(err)));
    if (busy) {
      absl::StatusOr<std::string> left = ReadWholeFile(absl::StrCat(dir.path, "/", dir.tasks_file));
      if (left.ok() && !left->empty()) {
        errors.push_back(
            absl::StrCat("tasks still in it: ",
                         absl::StrJoin(absl::StrSplit(*left, '\n', absl::SkipEmpty()), " ")));
      }
    }
    return absl::InternalError(absl::StrJoin(errors, "; "));
  }
}

absl::Status RemoveConfigfsItem(const ConfigfsItem& item, const RemoveDirFn& remove_dir) {
  struct stat st;
  if (lstat(item.path.c_str(), &st) != 0 && errno == ENOENT) return absl::OkStatus();
  if (!item.power_file.empty() && access(item.power_file.c_str(), F_OK) == 0) {
    if (absl::Status s = WriteAttribute(item.power_file, "0"); !s.ok()) return s;
  }
  const int err = remove_dir(item.path);
  if (err == 0 || err == ENOENT) return absl::OkStatus();
  return absl::InternalError(
      absl::StrCat("removing configfs item ", item.path, ": ", strerror(err)));
}

}  // namespace blkbench
