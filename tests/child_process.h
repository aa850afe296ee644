// A child process for cross-component tests (a daemon from the build tree, a real
// Prometheus), its output appended to a log file, always reaped.
#ifndef BLKBENCH_TESTS_CHILD_PROCESS_H_
#define BLKBENCH_TESTS_CHILD_PROCESS_H_

#include <sys/types.h>

#include <csignal>
#include <string>
#include <vector>

#include "absl/time/time.h"

namespace blkbench::testing {

// Spawned at construction (argv[0] is a path, not searched in $PATH); SIGKILLed and
// reaped at destruction if still running. Not thread-safe.
class ChildProcess {
 public:
  // What goes to the log file; the rest stays the test's.
  enum class Log { kStderr, kStdoutAndStderr };

  ChildProcess(const std::vector<std::string>& argv, const std::string& log, Log what);
  ~ChildProcess() { Kill(SIGKILL); }
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  // False when the process could not be spawned.
  bool ok() const { return pid_ > 0; }
  // Sends `sig` and waits for the process to exit. No-op once it was reaped.
  void Kill(int sig);
  // Sends `sig` without waiting (SIGSTOP, SIGCONT). No-op once it was reaped.
  void Signal(int sig);
  // Sends SIGTERM, waits up to `grace` for the process to exit, then SIGKILLs it.
  // No-op once it was reaped.
  void Terminate(absl::Duration grace);

 private:
  pid_t pid_ = -1;
};

}  // namespace blkbench::testing

#endif  // BLKBENCH_TESTS_CHILD_PROCESS_H_
