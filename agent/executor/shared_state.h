// Memory shared between the executor (parent) and its jobs (threads or fork()ed
// processes): run control words, per-job cumulative stats and the optional I/O trace.
#ifndef BLKBENCH_AGENT_EXECUTOR_SHARED_STATE_H_
#define BLKBENCH_AGENT_EXECUTOR_SHARED_STATE_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"
#include "agent/executor/io_trace.h"
#include "common/histogram.h"

namespace blkbench {

static_assert(std::atomic<uint32_t>::is_always_lock_free && sizeof(std::atomic<uint32_t>) == 4,
              "futex words and cross-process atomics need lock-free 32-bit atomics");
static_assert(std::atomic<uint64_t>::is_always_lock_free);

enum Dir : int { kRead = 0, kWrite = 1 };

enum class JobState : uint32_t { kStarting = 0, kReady, kDone, kFailed };

// Values of Control::go.
inline constexpr uint32_t kGoWait = 0;
inline constexpr uint32_t kGoRun = 1;
inline constexpr uint32_t kGoAbort = 2;  // the run ends before it started

// Run-wide words. The parent writes the times before setting `go` (release); jobs read
// them after seeing `go` (acquire). `events` is bumped (and futex-woken) by every job
// state change so the parent can sleep until something happens.
struct alignas(64) Control {
  std::atomic<uint32_t> go{kGoWait};          // futex word
  std::atomic<uint32_t> stop{0};              // cancel or a failed job: stop issuing, drain, exit
  std::atomic<uint32_t> events{0};            // futex word
  std::atomic<uint64_t> measure_start_ns{0};  // CLOCK_MONOTONIC, end of ramp_time
  std::atomic<uint64_t> deadline_ns{0};       // 0 = no time limit
};

// Cumulative stats of one job, written only by that job (so an increment is a relaxed
// load + store, no locked instruction) and read by the parent's sampler at any time.
// Counters cover the measured phase (after ramp_time) only.
struct alignas(64) JobShared {
  std::atomic<JobState> state{JobState::kStarting};
  std::atomic<int32_t> status_code{0};  // absl::StatusCode of a failure
  std::atomic<int32_t> error_errno{0};
  char error[256] = {};         // written before state becomes kFailed (release)
  std::atomic<int32_t> tid{0};  // the job's kernel task id (a process job's pid), set before kReady

  std::atomic<uint64_t> ios[2] = {};
  std::atomic<uint64_t> bytes[2] = {};
  std::atomic<uint64_t> lat_sum_ns[2] = {};
  std::atomic<uint64_t> lat_min_ns[2] = {UINT64_MAX, UINT64_MAX};
  std::atomic<uint64_t> lat_max_ns[2] = {};
  std::atomic<uint64_t> end_ns{0};  // CLOCK_MONOTONIC of the job's last completion
  std::atomic<uint64_t> usr_ns{0};  // CPU time of the measured phase
  std::atomic<uint64_t> sys_ns{0};
  std::atomic<uint64_t> trace_len{0};

  // Executor internals (reported in RunResult.internals).
  std::atomic<uint64_t> max_inflight{0};
  std::atomic<uint64_t> submit_calls{0};      // io_uring_enter calls that submitted SQEs
  std::atomic<uint64_t> submitted{0};         // SQEs submitted
  std::atomic<uint64_t> max_submit_batch{0};  // most SQEs in one submit call
  std::atomic<uint64_t> reap_calls{0};        // CQE peeks that returned >= 1 completion
  std::atomic<uint64_t> max_reap_batch{0};    // most CQEs reaped at once
  std::atomic<uint64_t> short_reaps{0};       // reaps below min(complete_min, in flight)
  std::atomic<uint64_t> ring_flags{0};        // io_uring setup flags actually used
  std::atomic<uint64_t> fsyncs{0};            // fsync=N and end_fsync calls

  alignas(64) std::atomic<uint64_t> buckets[2][LatencyHistogram::kBuckets] = {};
};

// Adds n to a counter that only the calling job writes: a plain load/add/store.
inline void Bump(std::atomic<uint64_t>& a, uint64_t n) {
  a.store(a.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
}
inline void RaiseTo(std::atomic<uint64_t>& a, uint64_t v) {
  if (v > a.load(std::memory_order_relaxed)) a.store(v, std::memory_order_relaxed);
}

// One MAP_SHARED|MAP_ANONYMOUS mapping holding Control, numjobs JobShared and the
// traces; it stays valid in fork()ed children and is unmapped by the destructor.
class SharedArea {
 public:
  static absl::StatusOr<std::unique_ptr<SharedArea>> Create(uint32_t jobs, uint32_t trace_per_job);
  ~SharedArea();
  SharedArea(const SharedArea&) = delete;
  SharedArea& operator=(const SharedArea&) = delete;

  Control& control() { return *control_; }
  JobShared& job(uint32_t i) { return jobs_[i]; }
  const JobShared& job(uint32_t i) const { return jobs_[i]; }
  uint32_t num_jobs() const { return num_jobs_; }
  IoTrace* trace(uint32_t i) {
    return trace_per_job_ ? traces_ + size_t{i} * trace_per_job_ : nullptr;
  }

 private:
  SharedArea() = default;
  void* base_ = nullptr;
  size_t size_ = 0;
  uint32_t num_jobs_ = 0;
  uint32_t trace_per_job_ = 0;
  Control* control_ = nullptr;
  JobShared* jobs_ = nullptr;
  IoTrace* traces_ = nullptr;
};

// Process-shared futex on a 32-bit atomic (FUTEX_WAIT without _PRIVATE, so it works
// across fork()). Waits while *word == expected, at most timeout_ns (< 0: forever).
void FutexWait(std::atomic<uint32_t>& word, uint32_t expected, int64_t timeout_ns);
void FutexWakeAll(std::atomic<uint32_t>& word);

// CLOCK_MONOTONIC in nanoseconds (vDSO, no syscall on TSC/kvm-clock hosts).
uint64_t MonotonicNs();

}  // namespace blkbench

#endif  // BLKBENCH_AGENT_EXECUTOR_SHARED_STATE_H_
