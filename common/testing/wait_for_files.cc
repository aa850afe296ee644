// WaitForFiles; see wait_for_files.h.
#include "common/testing/wait_for_files.h"

#include <dirent.h>
#include <poll.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace blkbench::testing {
namespace {

constexpr uint32_t kEvents = IN_CREATE | IN_MODIFY | IN_CLOSE_WRITE | IN_MOVED_TO;

// Watches `dir` and the directories already under it; `dirs` maps watches to paths.
void Watch(int fd, const std::string& dir, std::map<int, std::string>& dirs) {
  const int wd = inotify_add_watch(fd, dir.c_str(), kEvents | IN_ONLYDIR);
  if (wd < 0) return;
  dirs[wd] = dir;
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return;
  while (const dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    if (e->d_type == DT_DIR && name != "." && name != "..")
      Watch(fd, absl::StrCat(dir, "/", name), dirs);
  }
  closedir(d);
}

}  // namespace

bool WaitForFiles(const std::string& root, absl::Time deadline, const std::function<bool()>& done,
                  const std::vector<std::string>& only) {
  const int fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  if (fd < 0) return done();
  std::map<int, std::string> dirs;
  Watch(fd, root, dirs);
  bool ok = done();
  while (!ok) {
    const absl::Duration left = deadline - absl::Now();
    if (left <= absl::ZeroDuration()) break;
    pollfd p = {fd, POLLIN, 0};
    const int64_t ms = std::min<int64_t>(absl::ToInt64Milliseconds(left) + 1, INT_MAX);
    if (poll(&p, 1, static_cast<int>(ms)) < 0 && errno != EINTR) break;
    alignas(inotify_event) char buf[16384];
    bool changed = false;
    for (ssize_t n; (n = read(fd, buf, sizeof buf)) > 0;) {
      for (ssize_t i = 0; i < n;) {
        const auto* e = reinterpret_cast<const inotify_event*>(buf + i);
        auto parent = dirs.find(e->wd);
        if ((e->mask & IN_ISDIR) && (e->mask & IN_CREATE) && e->len > 0 && parent != dirs.end()) {
          Watch(fd, absl::StrCat(parent->second, "/", e->name), dirs);
        }
        changed = changed || only.empty() ||
                  (e->len > 0 && std::find(only.begin(), only.end(), e->name) != only.end());
        i += static_cast<ssize_t>(sizeof(inotify_event) + e->len);
      }
    }
    if (changed) ok = done();
  }
  close(fd);
  return ok;
}

}  // namespace blkbench::testing
