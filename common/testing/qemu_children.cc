// QemuChildren; see qemu_children.h.
#include "common/testing/qemu_children.h"

#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <sstream>
#include <string>
#include <system_error>

#include "absl/strings/match.h"

namespace blkbench::testing {

std::vector<pid_t> QemuChildren(pid_t parent) {
  std::vector<pid_t> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    // (read(2): a process that exits mid-read makes an ifstream throw.)
    const int fd = open((e.path() / "stat").c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    char buf[1024];
    const ssize_t n = read(fd, buf, sizeof(buf));
    close(fd);
    if (n <= 0) continue;
    const std::string stat(buf, static_cast<size_t>(n));
    // "pid (comm) state ppid ...": comm may hold spaces and parentheses.
    const size_t open = stat.find('('), close = stat.rfind(')');
    if (open == std::string::npos || close == std::string::npos) continue;
    std::istringstream rest(stat.substr(close + 2));
    char state = 0;
    pid_t ppid = 0;
    rest >> state >> ppid;
    if (ppid == parent && absl::StartsWith(stat.substr(open + 1, close - open - 1), "qemu")) {
      out.push_back(static_cast<pid_t>(std::stol(name)));
    }
  }
  return out;
}

}  // namespace blkbench::testing
