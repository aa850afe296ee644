// Subprocess and RunProcess: fork + execvpe with everything the child needs prepared
// before fork (only async-signal-safe calls between fork and exec).
#include "common/vm/process.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <ctime>
#include <deque>
#include <functional>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"

extern char** environ;

namespace blkbench::vm {
namespace {

// The merged environment: this process's, with `extra` (KEY=VALUE) added or replacing.
std::vector<std::string> MergedEnv(const std::vector<std::string>& extra) {
  std::vector<std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    absl::string_view entry(*e);
    absl::string_view key = entry.substr(0, entry.find('='));
    bool replaced = false;
    for (const std::string& x : extra) {
      if (x.size() > key.size() && absl::StartsWith(x, key) && x[key.size()] == '=') {
        replaced = true;
      }
    }
    if (!replaced) env.emplace_back(entry);
  }
  env.insert(env.end(), extra.begin(), extra.end());
  return env;
}

std::vector<char*> CStrings(std::vector<std::string>& v) {
  std::vector<char*> out;
  out.reserve(v.size() + 1);
  for (std::string& s : v) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

void CloseFd(int& fd) {
  if (fd >= 0) close(fd);
  fd = -1;
}

// In the child: points `target` (1 or 2) at the sink. Returns false on failure.
bool Redirect(int target, Subprocess::Sink sink, const char* path, int pipe_write) {
  int fd = -1;
  switch (sink) {
    case Subprocess::Sink::kInherit:
      return true;
    case Subprocess::Sink::kStdout:
      return dup2(1, target) >= 0;
    case Subprocess::Sink::kPipe:
      return dup2(pipe_write, target) >= 0;
    case Subprocess::Sink::kNull:
      fd = open("/dev/null", O_WRONLY);
      break;
    case Subprocess::Sink::kFile:
      fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
      break;
  }
  if (fd < 0 || dup2(fd, target) < 0) return false;
  close(fd);
  return true;
}

}  // namespace

absl::Time MonotonicNow() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return absl::TimeFromTimespec(ts);
}

int PollTimeoutMs(absl::Time deadline) {
  if (deadline == absl::InfiniteFuture()) return -1;
  absl::Duration left = deadline - MonotonicNow();
  if (left <= absl::ZeroDuration()) return 0;
  return static_cast<int>(absl::ToInt64Milliseconds(absl::Ceil(left, absl::Milliseconds(1))));
}

namespace {

// PR_SET_PDEATHSIG fires when the *thread* that forked the child ends, not the process
// (prctl(2)): a guest booted from a run's thread was killed the moment that run's thread
// returned. So every child is forked by one thread that lives as long as the process.
class Spawner {
 public:
  static Spawner& Get() {
    static Spawner* const spawner = new Spawner();  // never destroyed: its thread never ends
    return *spawner;
  }
  // Runs `fork_it` on the spawner thread; returns when it has.
  void Run(const std::function<void()>& fork_it) {
    if (std::this_thread::get_id() == thread_id_) return fork_it();
    absl::Notification done;
    {
      absl::MutexLock lock(&mu_);
      queue_.push_back({&fork_it, &done});
    }
    done.WaitForNotification();
  }

 private:
  struct Task {
    const std::function<void()>* fork_it;
    absl::Notification* done;
  };
  Spawner() {
    std::thread t([this] { Loop(); });
    thread_id_ = t.get_id();
    t.detach();
  }
  void Loop() {
    for (;;) {
      Task task;
      {
        absl::MutexLock lock(&mu_);
        mu_.Await(absl::Condition(
            +[](std::deque<Task>* q) { return !q->empty(); }, &queue_));
        task = queue_.front();
        queue_.pop_front();
      }
      (*task.fork_it)();
      task.done->Notify();
    }
  }
  absl::Mutex mu_;
  std::deque<Task> queue_ ABSL_GUARDED_BY(mu_);
  std::thread::id thread_id_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Subprocess>> Subprocess::Start(const std::vector<std::string>& argv,
                                                              const Options& options) {
  absl::StatusOr<std::unique_ptr<Subprocess>> started;
  Spawner::Get().Run([&] { started = StartOnThisThread(argv, options); });
  return started;
}

absl::StatusOr<std::unique_ptr<Subprocess>> Subprocess::StartOnThisThread(
    const std::vector<std::string>& argv, const Options& options) {
  if (argv.empty()) return absl::InvalidArgumentError("Subprocess::Start: empty argv");
  std::vector<std::string> args = argv;
  std::vector<std::string> env = MergedEnv(options.env);
  std::vector<char*> c_args = CStrings(args);
  std::vector<char*> c_env = CStrings(env);
  const char* cwd = options.cwd.empty() ? nullptr : options.cwd.c_str();

  int out_pipe[2] = {-1, -1};
  int err_pipe[2] = {-1, -1};
  int exec_pipe[2] = {-1, -1};  // the child's exec errno; EOF when exec succeeded
  auto close_all = [&] {
    for (int* p : {out_pipe, err_pipe, exec_pipe}) {
      CloseFd(p[0]);
      CloseFd(p[1]);
    }
  };
  if ((options.stdout_sink == Sink::kPipe && pipe2(out_pipe, O_CLOEXEC) != 0) ||
      (options.stderr_sink == Sink::kPipe && pipe2(err_pipe, O_CLOEXEC) != 0) ||
      pipe2(exec_pipe, O_CLOEXEC) != 0) {
    int e = errno;
    close_all();
    return absl::ErrnoToStatus(e, absl::StrCat("pipe for ", argv[0]));
  }
  const pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0) {
    int e = errno;
    close_all();
    return absl::ErrnoToStatus(e, absl::StrCat("fork for ", argv[0]));
  }
  const char* stdin_path = options.stdin_path.empty() ? "/dev/null" : options.stdin_path.c_str();
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);  // the parent died before prctl
    if (options.new_process_group) setpgid(0, 0);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    signal(SIGPIPE, SIG_DFL);
    int null_in = open(stdin_path, O_RDONLY);
    bool ok = null_in >= 0 && dup2(null_in, 0) >= 0 &&
              Redirect(1, options.stdout_sink, options.stdout_path.c_str(), out_pipe[1]) &&
              Redirect(2, options.stderr_sink, options.stderr_path.c_str(), err_pipe[1]) &&
              (cwd == nullptr || chdir(cwd) == 0);
    if (ok) execvpe(c_args[0], c_args.data(), c_env.data());
    int e = errno;
    ssize_t ignored = write(exec_pipe[1], &e, sizeof(e));
    (void)ignored;  // nothing to do about a failed report in a dying child
    _exit(127);
  }
  std::unique_ptr<Subprocess> p(new Subprocess());
  p->name_ = argv[0];
  p->pid_ = pid;
  p->group_ = options.new_process_group;
  p->stdout_fd_ = out_pipe[0];
  p->stderr_fd_ = err_pipe[0];
  out_pipe[0] = err_pipe[0] = -1;
  CloseFd(out_pipe[1]);
  CloseFd(err_pipe[1]);
  CloseFd(exec_pipe[1]);
  int child_errno = 0;
  ssize_t n;
  do {
    n = read(exec_pipe[0], &child_errno, sizeof(child_errno));
  } while (n < 0 && errno == EINTR);
  CloseFd(exec_pipe[0]);
  p->pidfd_ = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  if (n == sizeof(child_errno)) {
    p->Kill();
    return absl::ErrnoToStatus(child_errno, absl::StrCat("cannot run ", argv[0]));
  }
  if (p->pidfd_ < 0) {
    int e = errno;
    p->Kill();
    return absl::ErrnoToStatus(e, absl::StrCat("pidfd_open for ", argv[0]));
  }
  return p;
}

Subprocess::~Subprocess() {
  if (!reaped_) Kill();
  CloseFd(pidfd_);
  CloseFd(stdout_fd_);
  CloseFd(stderr_fd_);
}

void Subprocess::CloseStdout() { CloseFd(stdout_fd_); }
void Subprocess::CloseStderr() { CloseFd(stderr_fd_); }

absl::StatusOr<int> Subprocess::Wait(absl::Time deadline) {
  while (!reaped_) {
    int st = 0;
    pid_t r = waitpid(pid_, &st, WNOHANG);
    if (r == pid_) {
      reaped_ = true;
      status_ = st;
      break;
    }
    if (r < 0 && errno != EINTR) return absl::ErrnoToStatus(errno, "waitpid " + name_);
    if (r == 0) {
      int ms = PollTimeoutMs(deadline);
      if (ms == 0) return absl::DeadlineExceededError(absl::StrCat(name_, " still running"));
      pollfd pfd{pidfd_, POLLIN, 0};
      if (pidfd_ < 0) {
        // No pidfd (only while Start is failing): block, the child is being killed.
        if (waitpid(pid_, &st, 0) == pid_) {
          reaped_ = true;
          status_ = st;
        }
        break;
      }
      poll(&pfd, 1, ms);
    }
  }
  return status_;
}

void Subprocess::Kill() {
  if (reaped_) return;
  kill(group_ ? -pid_ : pid_, SIGKILL);
  int st = 0;
  while (waitpid(pid_, &st, 0) < 0 && errno == EINTR) {
  }
  reaped_ = true;
  status_ = st;
}

void Subprocess::KillGroup() {
  if (group_) kill(-pid_, SIGKILL);
}

std::string DescribeWaitStatus(int status) {
  if (WIFEXITED(status)) return absl::StrCat("exit ", WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    return absl::StrCat("signal ", WTERMSIG(status), " (", strsignal(WTERMSIG(status)), ")");
  }
  return absl::StrCat("wait status ", status);
}

bool ProcessResult::ok() const { return WIFEXITED(status) && WEXITSTATUS(status) == 0; }

bool DrainInto(int fd, std::string& out, size_t max) {
  char buf[16384];
  ssize_t n = read(fd, buf, sizeof(buf));
  if (n < 0 && (errno == EINTR || errno == EAGAIN)) return true;
  if (n <= 0) return false;
  out.append(buf, static_cast<size_t>(n));
  if (out.size() > max) out.erase(0, out.size() - max);
  return true;
}

absl::StatusOr<ProcessResult> RunProcess(const std::vector<std::string>& argv,
                                         const RunOptions& options) {
  Subprocess::Options so;
  so.cwd = options.cwd;
  if (!options.stdout_path.empty()) {
    so.stdout_sink = Subprocess::Sink::kFile;
    so.stdout_path = options.stdout_path;
    so.stderr_sink = Subprocess::Sink::kPipe;
  }
  absl::StatusOr<std::unique_ptr<Subprocess>> child = Subprocess::Start(argv, so);
  if (!child.ok()) return child.status();
  Subprocess& p = **child;
  const absl::Time deadline = MonotonicNow() + options.timeout;
  ProcessResult result;
  int fd = p.stdout_fd() >= 0 ? p.stdout_fd() : p.stderr_fd();
  while (fd >= 0) {
    pollfd pfd{fd, POLLIN, 0};
    int ms = PollTimeoutMs(deadline);
    if (ms == 0 || (poll(&pfd, 1, ms) == 0 && PollTimeoutMs(deadline) == 0)) {
      p.Kill();
      return absl::DeadlineExceededError(
          absl::StrCat(absl::StrJoin(argv, " "), ": still running after ",
                       absl::FormatDuration(options.timeout), "; killed"));
    }
    if ((pfd.revents & (POLLIN | POLLHUP | POLLERR)) != 0 &&
        !DrainInto(fd, result.output, options.max_output)) {
      fd = -1;
    }
  }
  absl::StatusOr<int> st = p.Wait(deadline);
  if (!st.ok()) {
    p.Kill();
    return absl::DeadlineExceededError(
        absl::StrCat(absl::StrJoin(argv, " "), ": closed its output but did not exit"));
  }
  result.status = *st;
  return result;
}

absl::StatusOr<std::string> RunChecked(const std::vector<std::string>& argv,
                                       const RunOptions& options) {
  absl::StatusOr<ProcessResult> r = RunProcess(argv, options);
  if (!r.ok()) return r.status();
  if (!r->ok()) {
    constexpr size_t kTail = 2048;
    absl::string_view out = r->output;
    if (out.size() > kTail) out = out.substr(out.size() - kTail);
    return absl::InternalError(absl::StrCat("`", absl::StrJoin(argv, " "), "` failed (",
                                            DescribeWaitStatus(r->status), "): ", out));
  }
  return std::move(r->output);
}

}  // namespace blkbench::vm
