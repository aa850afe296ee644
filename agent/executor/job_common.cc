// Lifecycle reporting, measured-phase bookkeeping and setup helpers shared by the job
// loop and the engines (see job.h).
#include <fcntl.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstring>

#include "agent/executor/job.h"

namespace blkbench {
namespace {

uint64_t TimevalNs(const timeval& tv) {
  return static_cast<uint64_t>(tv.tv_sec) * 1'000'000'000u +
         static_cast<uint64_t>(tv.tv_usec) * 1000u;
}

void CpuNs(bool thread_mode, uint64_t* usr, uint64_t* sys) {
  rusage ru{};
  // fio: RUSAGE_THREAD for thread jobs, RUSAGE_SELF for process jobs (the child is the
  // job; this also counts an SQPOLL kernel thread of the child).
  getrusage(thread_mode ? RUSAGE_THREAD : RUSAGE_SELF, &ru);
  *usr = TimevalNs(ru.ru_utime);
  *sys = TimevalNs(ru.ru_stime);
}

}  // namespace

void JobReporter::Signal(JobState s) {
  out_.state.store(s, std::memory_order_release);
  ctl_.events.fetch_add(1, std::memory_order_release);
  FutexWakeAll(ctl_.events);
}

void JobReporter::Ready() {
  // For the parent's RunContext::place_job, which runs between kReady and go.
  out_.tid.store(static_cast<int32_t>(gettid()), std::memory_order_relaxed);
  Signal(JobState::kReady);
}
void JobReporter::Done() { Signal(JobState::kDone); }

bool JobReporter::WaitForGo() {
  uint32_t go;
  while ((go = ctl_.go.load(std::memory_order_acquire)) == kGoWait) FutexWait(ctl_.go, kGoWait, -1);
  return go == kGoRun && !stop_requested();
}

void JobReporter::Fail(absl::StatusCode code, int err, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(out_.error, sizeof(out_.error), fmt, ap);
  va_end(ap);
  out_.status_code.store(static_cast<int32_t>(code), std::memory_order_relaxed);
  out_.error_errno.store(err, std::memory_order_relaxed);
  ctl_.stop.store(1, std::memory_order_relaxed);  // no point in the other jobs going on
  Signal(JobState::kFailed);
}

Phase::Phase(const JobPlan& plan, const Control& ctl)
    : measure_start_(ctl.measure_start_ns.load(std::memory_order_relaxed)),
      deadline_(ctl.deadline_ns.load(std::memory_order_relaxed)),
      budget_(plan.io_budget),
      thread_mode_(plan.job->thread) {}

void Phase::StartMeasuring() {
  measuring_ = true;
  issued_ = 0;
  CpuNs(thread_mode_, &usr0_ns_, &sys0_ns_);
}

void Phase::Finish(uint64_t end_ns, JobShared& out) {
  // Release: a reader that sees end_ns also sees every counter flushed before it.
  out.end_ns.store(end_ns, std::memory_order_release);
  if (!measuring_) return;
  uint64_t usr = 0, sys = 0;
  CpuNs(thread_mode_, &usr, &sys);
  out.usr_ns.store(usr - usr0_ns_, std::memory_order_relaxed);
  out.sys_ns.store(sys - sys0_ns_, std::memory_order_relaxed);
}

int OpenTarget(const JobPlan& plan, JobReporter& reporter) {
  // Never O_CREAT/O_TRUNC (the caller checked the target) and never O_EXCL (the agent
  // already holds the exclusive open of the device).
  int flags = (plan.job->writes ? O_RDWR : O_RDONLY) | O_CLOEXEC;
  if (plan.job->direct) flags |= O_DIRECT;
  const int fd = open(plan.path, flags);
  if (fd < 0) {
    const int err = errno;
    reporter.Fail(absl::StatusCode::kInternal, err, "job %u: open(%s, %s%s): %s", plan.index,
                  plan.path, plan.job->writes ? "O_RDWR" : "O_RDONLY",
                  plan.job->direct ? "|O_DIRECT" : "", ErrnoText(err));
  }
  return fd;
}

bool ApplyAffinity(const JobPlan& plan, JobReporter& reporter) {
  if (!plan.has_affinity) return true;
  // pid 0 = the calling thread (thread jobs) or the child process (process jobs).
  if (sched_setaffinity(0, sizeof(plan.cpus), &plan.cpus) != 0) {
    const int err = errno;
    reporter.Fail(absl::StatusCode::kInvalidArgument, err,
                  "job %u: cpus_allowed: sched_setaffinity: %s", plan.index, ErrnoText(err));
    return false;
  }
  return true;
}

void* MapMemory(size_t bytes, bool fill, JobReporter& reporter) {
  bytes = AlignUp(bytes, 4096);
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    const int err = errno;
    reporter.Fail(absl::StatusCode::kResourceExhausted, err, "mmap(%zu bytes) for I/O buffers: %s",
                  bytes, ErrnoText(err));
    return nullptr;
  }
  if (fill) {
    // Non-zero, non-repeating-per-block data so written blocks are recognisable (fio
    // fills write buffers with random data once, too).
    uint64_t x = 0x9e3779b97f4a7c15ULL;
    auto* w = static_cast<uint64_t*>(p);
    for (size_t i = 0; i < bytes / 8; ++i) {
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      w[i] = x | 1;
    }
  }
  return p;
}

void UnmapMemory(void* p, size_t bytes) {
  if (p != nullptr) munmap(p, AlignUp(bytes, 4096));
}

}  // namespace blkbench
