// Starting programs from an argv (never a shell string), waiting for them with deadlines
// and reading their output: the one way common/vm runs apt-get, dpkg, xz, qemu and, in
// the guest, the host's commands.
#ifndef BLKBENCH_COMMON_VM_PROCESS_H_
#define BLKBENCH_COMMON_VM_PROCESS_H_

#include <sys/types.h>

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace blkbench::vm {

// CLOCK_MONOTONIC as an absl::Time: every deadline in common/vm is on this clock, so a
// wall-clock step never stretches or cuts a timeout.
absl::Time MonotonicNow();
// Milliseconds from MonotonicNow() to `deadline` for poll(): 0 when past, -1 for
// absl::InfiniteFuture(), rounded up so poll never wakes before the deadline.
int PollTimeoutMs(absl::Time deadline);

// A child process. Not thread-safe. The destructor kills (SIGKILL) and reaps a child that
// is still running, so no child outlives its owner; PR_SET_PDEATHSIG makes the kernel
// do the same if this process dies first.
class Subprocess {
 public:
  // Where a child's stdout or stderr goes.
  enum class Sink {
    kNull,     // /dev/null
    kPipe,     // a pipe whose read end is stdout_fd() / stderr_fd()
    kFile,     // the file `*_path`, created or truncated
    kStdout,   // stderr only: wherever stdout goes (one pipe or file for both)
    kInherit,  // this process's own
  };
  struct Options {
    Sink stdout_sink = Sink::kPipe;
    Sink stderr_sink = Sink::kStdout;
    std::string stdout_path;
    std::string stderr_path;
    std::string cwd;                 // empty: this process's
    std::string stdin_path;          // the child's stdin; empty: /dev/null
    std::vector<std::string> env;    // KEY=VALUE added to (or replacing in) this environment
    bool new_process_group = false;  // so KillGroup() reaches the child's children
  };

  // Starts argv[0], searched in PATH. Errors: InvalidArgument for an empty argv,
  // NotFound / PermissionDenied naming argv[0] when it cannot be executed (reported by
  // the child before exec through a close-on-exec pipe, so it is never a wait status).
  static absl::StatusOr<std::unique_ptr<Subprocess>> Start(const std::vector<std::string>& argv,
                                                           const Options& options);
  // The child is forked by one process-lifetime thread, whichever thread calls: its
  // PR_SET_PDEATHSIG (it dies with this process) would otherwise fire when the calling
  // thread ends.
  ~Subprocess();
  Subprocess(const Subprocess&) = delete;
  Subprocess& operator=(const Subprocess&) = delete;

  pid_t pid() const { return pid_; }
  // A pidfd, readable once the child has exited (for poll() beside other fds).
  int pidfd() const { return pidfd_; }
  // Read ends of Sink::kPipe outputs (-1 otherwise); owned by this object.
  int stdout_fd() const { return stdout_fd_; }
  int stderr_fd() const { return stderr_fd_; }
  // Closes a pipe's read end early (after its EOF).
  void CloseStdout();
  void CloseStderr();

  // Waits for exit until `deadline`; returns the waitpid status. DeadlineExceeded if it
  // is still running then (it keeps running). Once reaped, returns the same status again.
  absl::StatusOr<int> Wait(absl::Time deadline);
  // SIGKILL to the child (its process group with new_process_group) and reap it.
  void Kill();
  // SIGKILL to the child's process group (new_process_group only), also after the child
  // itself was reaped: what it left running in the background.
  void KillGroup();
  bool exited() const { return reaped_; }

 private:
  Subprocess() = default;
  static absl::StatusOr<std::unique_ptr<Subprocess>> StartOnThisThread(
      const std::vector<std::string>& argv, const Options& options);

  std::string name_;
  pid_t pid_ = -1;
  int pidfd_ = -1;
  int stdout_fd_ = -1;
  int stderr_fd_ = -1;
  bool group_ = false;
  bool reaped_ = false;
  int status_ = 0;
};

// "exit 3", "signal 9 (Killed)": a waitpid status for error messages.
std::string DescribeWaitStatus(int status);

struct ProcessResult {
  int status = 0;      // as from waitpid
  std::string output;  // stdout and stderr together, at most max_output bytes (the tail)
  bool ok() const;     // exited with 0
};

struct RunOptions {
  absl::Duration timeout = absl::Minutes(10);
  size_t max_output = 1 << 20;
  std::string cwd;
  std::string stdout_path;  // non-empty: stdout goes to this file, only stderr is captured
};

// Runs argv to completion. DeadlineExceeded (naming argv[0]) when it outlives `timeout`;
// it is then killed.
absl::StatusOr<ProcessResult> RunProcess(const std::vector<std::string>& argv,
                                         const RunOptions& options = {});

// RunProcess that must exit 0; otherwise an Internal error with the command, its wait
// status and the tail of its output.
absl::StatusOr<std::string> RunChecked(const std::vector<std::string>& argv,
                                       const RunOptions& options = {});

// Reads what is available on a pipe into `out`, keeping at most `max` bytes (the tail);
// returns false on EOF or error.
bool DrainInto(int fd, std::string& out, size_t max);

}  // namespace blkbench::vm

#endif  // BLKBENCH_COMMON_VM_PROCESS_H_
