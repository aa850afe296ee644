// Starts jobs as threads (fio thread=1) or as fork()ed processes (fio's default, so
// e.g. bfq gives each job its own queue), and waits for, checks and kills them.
#ifndef BLKBENCH_AGENT_EXECUTOR_JOB_LAUNCHER_H_
#define BLKBENCH_AGENT_EXECUTOR_JOB_LAUNCHER_H_

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "agent/executor/shared_state.h"

namespace blkbench {

// Not thread-safe: owned and driven by the one thread that runs the executor.
class JobLauncher {
 public:
  explicit JobLauncher(bool threads) : threads_(threads) {}
  // Kills (processes) and reaps/joins whatever is still running.
  ~JobLauncher();
  JobLauncher(const JobLauncher&) = delete;
  JobLauncher& operator=(const JobLauncher&) = delete;

  // Runs fn on a new thread, or in a fork()ed child that calls fn() and then _exit(0)
  // (never returns into the caller's code; dies with the parent via PR_SET_PDEATHSIG).
  // fn must not allocate or lock in process mode (see job.h).
  absl::Status Start(uint32_t job, std::function<void()> fn);
  // Process mode: reaps exited children without blocking. Fails (Internal) for a child
  // that died before its job reached a terminal state in `area` (crash, signal).
  absl::Status CheckChildren(const SharedArea& area);
  // Process mode: SIGKILL every child still running. No-op for threads.
  void KillAll();
  // Blocks until every job thread/process has ended.
  void JoinAll();

 private:
  struct Child {
    pid_t pid;
    uint32_t job;
    bool reaped;
  };
  bool threads_;
  std::vector<std::thread> thread_list_;
  std::vector<Child> children_;
};

}  // namespace blkbench

#endif  // BLKBENCH_AGENT_EXECUTOR_JOB_LAUNCHER_H_
