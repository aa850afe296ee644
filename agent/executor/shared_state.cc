// Shared mapping for executor/job communication, futex helpers and the clock.
#include "agent/executor/shared_state.h"

#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <new>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace blkbench {
namespace {

size_t RoundUp(size_t v, size_t to) { return (v + to - 1) / to * to; }

}  // namespace

absl::StatusOr<std::unique_ptr<SharedArea>> SharedArea::Create(uint32_t jobs,
                                                               uint32_t trace_per_job) {
  const size_t control_size = RoundUp(sizeof(Control), alignof(JobShared));
  const size_t jobs_size = sizeof(JobShared) * jobs;
  const size_t trace_size = sizeof(IoTrace) * size_t{jobs} * trace_per_job;
  const size_t size = RoundUp(control_size + jobs_size + trace_size, 4096);
  void* base = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (base == MAP_FAILED) {
    return absl::ResourceExhaustedError(
        absl::StrCat("mmap(", size, " bytes, MAP_SHARED) for job stats: ", strerror(errno)));
  }
  std::unique_ptr<SharedArea> area(new SharedArea());
  area->base_ = base;
  area->size_ = size;
  area->num_jobs_ = jobs;
  area->trace_per_job_ = trace_per_job;
  char* p = static_cast<char*>(base);
  area->control_ = new (p) Control();
  area->jobs_ = reinterpret_cast<JobShared*>(p + control_size);
  for (uint32_t i = 0; i < jobs; ++i) new (&area->jobs_[i]) JobShared();
  area->traces_ = reinterpret_cast<IoTrace*>(p + control_size + jobs_size);
  return area;
}

SharedArea::~SharedArea() {
  // Control, JobShared and IoTrace are trivially destructible in practice (atomics of
  // scalars); the mapping is simply dropped.
  if (base_ != nullptr) munmap(base_, size_);
}

void FutexWait(std::atomic<uint32_t>& word, uint32_t expected, int64_t timeout_ns) {
  timespec ts{};
  timespec* tsp = nullptr;
  if (timeout_ns >= 0) {
    ts.tv_sec = timeout_ns / 1'000'000'000;
    ts.tv_nsec = timeout_ns % 1'000'000'000;
    tsp = &ts;
  }
  // EAGAIN (value changed), EINTR and ETIMEDOUT all just mean "look again".
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(&word), FUTEX_WAIT, expected, tsp, nullptr, 0);
}

void FutexWakeAll(std::atomic<uint32_t>& word) {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(&word), FUTEX_WAKE, INT32_MAX, nullptr, nullptr,
          0);
}

uint64_t MonotonicNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000u + static_cast<uint64_t>(ts.tv_nsec);
}

}  // namespace blkbench
