// One fio job (thread or fork()ed process) and the pieces the job loop and the engines
// share: lifecycle reporting, measured-phase bookkeeping and hot-path stats recording.
// Everything here runs after fork(): no heap allocation, no locks, no exceptions.
#ifndef BLKBENCH_AGENT_EXECUTOR_JOB_H_
#define BLKBENCH_AGENT_EXECUTOR_JOB_H_

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "absl/status/status.h"
#include "agent/executor/job_plan.h"
#include "agent/executor/shared_state.h"
#include "common/histogram.h"

namespace blkbench {

class IoEngine;

// Runs one job to completion in the calling thread on `engine` (job_loop.cc): setup (open,
// affinity, buffers, engine init), kReady, wait for Control::go, I/O until
// budget/deadline/stop, kDone or kFailed with a message in `out`. Never returns early
// without a terminal state.
void RunJob(const JobPlan& plan, IoEngine& engine, Control& ctl, JobShared& out);

// Job lifecycle in shared memory (fio td_set_runstate, much reduced).
class JobReporter {
 public:
  JobReporter(Control& ctl, JobShared& out) : ctl_(ctl), out_(out) {}
  void Ready();
  // Blocks until the parent says go; false if the run was stopped first.
  bool WaitForGo();
  void Done();
  // Records the failure (message formatted into the fixed buffer), marks kFailed and
  // wakes the parent. `err` is an errno value or 0.
  void Fail(absl::StatusCode code, int err, const char* fmt, ...)
      __attribute__((format(printf, 4, 5)));
  bool stop_requested() const { return ctl_.stop.load(std::memory_order_relaxed) != 0; }

 private:
  void Signal(JobState s);
  Control& ctl_;
  JobShared& out_;
};

// Measured phase: fio's ramp_time (stats start after it, like fio reset_all_stats),
// runtime deadline and io_size budget, plus the CPU time of the measured phase.
class Phase {
 public:
  Phase(const JobPlan& plan, const Control& ctl);
  // Feed every fresh clock reading.
  void Update(uint64_t now_ns) {
    if (!measuring_ && now_ns >= measure_start_) StartMeasuring();
    if (deadline_ != 0 && now_ns >= deadline_) expired_ = true;
  }
  bool measuring() const { return measuring_; }
  bool expired() const { return expired_; }
  // Reserves `bytes` of the measured-phase budget; false once it is used up. Ramp I/O
  // is limited by time only.
  bool Take(uint64_t bytes) {
    if (!measuring_) return true;
    if (issued_ >= budget_) return false;
    issued_ += bytes;
    return true;
  }
  // Gives back what the last Take reserved (the engine was busy; it is offered again).
  void Untake(uint64_t bytes) {
    if (measuring_) issued_ -= bytes;
  }
  // Publishes end time and the CPU used since the measured phase began.
  void Finish(uint64_t end_ns, JobShared& out);

 private:
  void StartMeasuring();
  uint64_t measure_start_, deadline_, budget_;
  uint64_t issued_ = 0;
  bool measuring_ = false;
  bool expired_ = false;
  bool thread_mode_;
  uint64_t usr0_ns_ = 0, sys0_ns_ = 0;
};

// Per-completion stats (fio add_lat_sample + add_iops/bw bookkeeping, much reduced):
// the bucket goes straight to shared memory, scalars are summed locally and published
// once per completion batch by Flush().
class LatencyRecorder {
 public:
  explicit LatencyRecorder(JobShared& out) : out_(out) {}
  void Record(int dir, uint64_t lat_ns, uint64_t bytes) {
    Bump(out_.buckets[dir][LatencyHistogram::BucketIndex(lat_ns)], 1);
    ++ios_[dir];
    bytes_[dir] += bytes;
    sum_[dir] += lat_ns;
    if (lat_ns < min_[dir]) min_[dir] = lat_ns;
    if (lat_ns > max_[dir]) max_[dir] = lat_ns;
  }
  void Flush() {
    for (int d = 0; d < 2; ++d) {
      if (ios_[d] == 0) continue;
      Bump(out_.lat_sum_ns[d], sum_[d]);
      Bump(out_.bytes[d], bytes_[d]);
      Bump(out_.ios[d], ios_[d]);
      if (min_[d] < out_.lat_min_ns[d].load(std::memory_order_relaxed)) {
        out_.lat_min_ns[d].store(min_[d], std::memory_order_relaxed);
      }
      RaiseTo(out_.lat_max_ns[d], max_[d]);
      ios_[d] = bytes_[d] = sum_[d] = 0;
    }
  }

 private:
  JobShared& out_;
  uint64_t ios_[2] = {0, 0}, bytes_[2] = {0, 0}, sum_[2] = {0, 0};
  uint64_t min_[2] = {UINT64_MAX, UINT64_MAX}, max_[2] = {0, 0};
};

// Setup helpers shared by the loop and the engines; on failure they call reporter.Fail and return
// -1 / nullptr.
int OpenTarget(const JobPlan& plan, JobReporter& reporter);
bool ApplyAffinity(const JobPlan& plan, JobReporter& reporter);
// Anonymous private mapping (page aligned, which satisfies O_DIRECT and fixed buffers),
// filled with a non-zero pattern when the job writes. mmap, not posix_memalign: a
// fork()ed child must not touch malloc.
void* MapMemory(size_t bytes, bool fill, JobReporter& reporter);
void UnmapMemory(void* p, size_t bytes);
inline size_t AlignUp(size_t v, size_t to) { return (v + to - 1) / to * to; }
// errno text without locale lookups (strerror may allocate; this runs after fork()).
inline const char* ErrnoText(int err) {
  const char* s = strerrordesc_np(err);
  return s != nullptr ? s : "unknown error";
}

}  // namespace blkbench

#endif  // BLKBENCH_AGENT_EXECUTOR_JOB_H_
