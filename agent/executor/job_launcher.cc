// Thread / fork() job launching, child reaping and killing (fio backend.c
// fork_main / thread_main start-up and reap_threads, much reduced).
#include "agent/executor/job_launcher.h"

#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"

namespace blkbench {

JobLauncher::~JobLauncher() {
  KillAll();
  JoinAll();
}

absl::Status JobLauncher::Start(uint32_t job, std::function<void()> fn) {
  if (threads_) {
    try {
      thread_list_.emplace_back(std::move(fn));
    } catch (const std::system_error& e) {
      return absl::ResourceExhaustedError(absl::StrCat("job ", job, ": std::thread: ", e.what()));
    }
    return absl::OkStatus();
  }
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) {
    return absl::ResourceExhaustedError(absl::StrCat("job ", job, ": fork: ", strerror(errno)));
  }
  if (pid == 0) {
    // Child: die with the parent, run the job, and leave without running any of the
    // parent's atexit handlers, destructors or test framework code.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);
    // The parent's signal handlers and descriptors (sockets, pipes, eventfds) are not
    // the job's business: default dispositions, and nothing open but stdio.
    for (int sig : {SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, SIGPIPE}) {
      signal(sig, SIG_DFL);
    }
    close_range(3, ~0U, 0);
    fn();
    _exit(0);
  }
  children_.push_back(Child{pid, job, false});
  return absl::OkStatus();
}

absl::Status JobLauncher::CheckChildren(const SharedArea& area) {
  for (Child& c : children_) {
    if (c.reaped) continue;
    int st = 0;
    const pid_t r = waitpid(c.pid, &st, WNOHANG);
    if (r == 0) continue;
    c.reaped = true;
    const JobState state = area.job(c.job).state.load(std::memory_order_acquire);
    const bool finished = state == JobState::kDone || state == JobState::kFailed;
    if (r < 0) {
      return absl::InternalError(
          absl::StrCat("job ", c.job, ": waitpid(", c.pid, "): ", strerror(errno)));
    }
    if (WIFSIGNALED(st)) {
      return absl::InternalError(absl::StrCat("job ", c.job, " (pid ", c.pid, ") killed by signal ",
                                              WTERMSIG(st), " (", strsignal(WTERMSIG(st)), ")"));
    }
    if (!finished || WEXITSTATUS(st) != 0) {
      return absl::InternalError(absl::StrCat("job ", c.job, " (pid ", c.pid,
                                              ") exited with status ", WEXITSTATUS(st),
                                              " before finishing"));
    }
  }
  return absl::OkStatus();
}

void JobLauncher::KillAll() {
  for (const Child& c : children_) {
    if (!c.reaped) kill(c.pid, SIGKILL);
  }
}

void JobLauncher::JoinAll() {
  for (std::thread& t : thread_list_) {
    if (t.joinable()) t.join();
  }
  for (Child& c : children_) {
    if (c.reaped) continue;
    int st = 0;
    while (waitpid(c.pid, &st, 0) < 0 && errno == EINTR) {
    }
    c.reaped = true;
  }
}

}  // namespace blkbench
