// Spawning, signalling and reaping test child processes; see child_process.h.
#include "tests/child_process.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>

#include "absl/time/clock.h"

extern char** environ;

namespace blkbench::testing {

ChildProcess::ChildProcess(const std::vector<std::string>& argv, const std::string& log, Log what) {
  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  const int fd = what == Log::kStdoutAndStderr ? 1 : 2;
  posix_spawn_file_actions_addopen(&fa, fd, log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  if (what == Log::kStdoutAndStderr) posix_spawn_file_actions_adddup2(&fa, 1, 2);
  if (posix_spawn(&pid_, args[0], &fa, nullptr, args.data(), environ) != 0) pid_ = -1;
  posix_spawn_file_actions_destroy(&fa);
}

void ChildProcess::Kill(int sig) {
  if (pid_ <= 0) return;
  kill(pid_, sig);
  int st;
  waitpid(pid_, &st, 0);
  pid_ = -1;
}

void ChildProcess::Signal(int sig) {
  if (pid_ > 0) kill(pid_, sig);
}

void ChildProcess::Terminate(absl::Duration grace) {
  if (pid_ <= 0) return;
  kill(pid_, SIGTERM);
  const absl::Time deadline = absl::Now() + grace;
  int st = 0;
  while (waitpid(pid_, &st, WNOHANG) == 0) {
    if (absl::Now() > deadline) {
      kill(pid_, SIGKILL);
      waitpid(pid_, &st, 0);
      break;
    }
    absl::SleepFor(absl::Milliseconds(50));  // reaping, not synchronisation
  }
  pid_ = -1;
}

}  // namespace blkbench::testing
