// Running host commands from tests; see command.h.
#include "common/testing/command.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include "absl/strings/str_cat.h"

namespace blkbench::testing {

int RunCommand(const std::string& cmd, std::string* out) {
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

absl::Status PromtoolCheckMetrics(const std::string& text) {
  if (!HaveCommand("promtool")) {
    return absl::FailedPreconditionError("promtool not installed (Debian package 'prometheus')");
  }
  char path[] = "/tmp/blkbench_promtool.XXXXXX";
  const int fd = mkstemp(path);
  if (fd < 0) return absl::InternalError("mkstemp failed");
  close(fd);
  std::ofstream(path, std::ios::binary) << text;
  std::string out;
  const int rc = RunCommand(std::string("promtool check metrics < ") + path + " 2>&1", &out);
  unlink(path);
  if (rc == 0) return absl::OkStatus();
  return absl::InvalidArgumentError("promtool check metrics: " + out);
}

bool HaveCommand(const std::string& name) {
  for (const char* dir : {"/usr/sbin/", "/sbin/", "/usr/bin/", "/bin/"}) {
    if (access((dir + name).c_str(), X_OK) == 0) return true;
  }
  return false;
}

MountGuard::~MountGuard() { Run({"umount", dir_}); }

absl::StatusOr<std::unique_ptr<MountGuard>> MountExt4ReadOnly(const std::string& device,
                                                              const std::string& dir, bool format) {
  if (format) {
    CommandResult mkfs =
        Run({"mkfs.ext4", "-q", "-F", "-E", "lazy_itable_init=0,lazy_journal_init=0", device});
    if (mkfs.exit_code != 0) {
      return absl::FailedPreconditionError(absl::StrCat("mkfs.ext4 ", device, ": ", mkfs.output));
    }
  }
  if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    return absl::FailedPreconditionError(absl::StrCat("mkdir ", dir, ": ", std::strerror(errno)));
  }
  CommandResult mount = Run({"mount", "-o", "ro,noload", device, dir});
  if (mount.exit_code != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("mount ", device, " at ", dir, ": ", mount.output));
  }
  sync();
  return std::make_unique<MountGuard>(dir);
}

SwapGuard::~SwapGuard() { Run({"swapoff", path_}); }

}  // namespace blkbench::testing
