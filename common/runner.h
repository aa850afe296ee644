// The Runner interface: one contract for the real-device io_uring/psync executor and
// the simulated-device scheduler engine, so every matrix, metric and gate treats both
// alike.
#ifndef BLKBENCH_COMMON_RUNNER_H_
#define BLKBENCH_COMMON_RUNNER_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <ostream>
#include <string>

#include "absl/status/statusor.h"
#include "blkbench/v1/metrics.pb.h"
#include "blkbench/v1/workload.pb.h"

namespace blkbench {

// The size every simulated device presents (agents register it; `blkbench sim` and the
// agent pass it as RunContext::target_size), so a cell gives the same run everywhere.
inline constexpr uint64_t kSimulatedDeviceBytes = uint64_t{1} << 40;

struct RunContext {
  v1::CellSpec cell;
  std::string target_path;   // allowlisted block device or regular file (already checked)
  uint64_t target_size = 0;  // bytes usable on the target
  uint32_t logical_block_size = 512;
  std::chrono::nanoseconds sample_interval = std::chrono::seconds(1);
  // Called once per interval, from the runner's own thread, with seq 1, 2, ... and the
  // interval's counts and latency-histogram delta. May be empty.
  std::function<void(const v1::Sample&)> on_sample;
  // Set by another thread to stop the run early; the runner returns Cancelled.
  const std::atomic<bool>* cancel = nullptr;
  // If set, called once per job, from the runner's thread, after the job is set up and before
  // it issues any I/O, with the job's index and kernel task id (a process job's pid, a thread
  // job's tid): the agent puts the job in its cgroup there. An error ends the run with that
  // error before any I/O. Runners whose jobs are not OS tasks (the engine) ignore it.
  std::function<absl::Status(uint32_t job, int tid)> place_job;
  // If set, the runner writes its dispatch (D) and completion (C) events there in
  // blkparse's default text format. The engine does; the io_uring executor ignores it
  // (use blktrace on a real device).
  std::ostream* trace = nullptr;
};

class Runner {
 public:
  virtual ~Runner() = default;
  // Runs the cell's job (all numjobs jobs) against ctx.target_path and blocks until it
  // finishes. On success the result holds io counters, iops, bandwidth, merged latency
  // histograms (all, read, write), the latency summary, CPU time and `runner`; the
  // caller adds host, device and applied queue settings. Errors: InvalidArgument for a
  // job the runner cannot do, Cancelled when ctx.cancel was set, Internal/Unavailable
  // for I/O or setup failures (message names the syscall and errno).
  virtual absl::StatusOr<v1::RunResult> Run(const RunContext& ctx) = 0;
};

}  // namespace blkbench

#endif  // BLKBENCH_COMMON_RUNNER_H_
