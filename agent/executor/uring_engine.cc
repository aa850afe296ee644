// The io_uring engine (fio engines/io_uring.c: fio_ioring_queue / _commit / _getevents /
// _event) on a liburing ring of iodepth entries; hipri → IOPOLL, sqthread_poll → SQPOLL,
// fixedbufs and registerfiles as fio's.
#include <liburing.h>
#include <sys/uio.h>

#include <algorithm>
#include <cerrno>
#include <memory>

#include "agent/executor/engine_registry.h"
#include "agent/executor/io_engine.h"

namespace blkbench {
namespace {

// Ring setup like fio_ioring_queue_init: the options the job asked for (hipri →
// IOPOLL, sqthread_poll → SQPOLL) are required; the rest are optimisations tried
// best-first and dropped on EINVAL (older kernels, or DEFER_TASKRUN with SQPOLL).
// DEFER_TASKRUN + SINGLE_ISSUER: completions are posted only when this task enters the
// kernel to wait for them, so no IPIs or task_work interruptions (fio 3.33 does the same).
int SetupRing(const JobPlan& plan, io_uring* ring, uint32_t* used_flags) {
  uint32_t required = 0;
  if (plan.job->hipri) required |= IORING_SETUP_IOPOLL;
  if (plan.job->sqthread_poll) required |= IORING_SETUP_SQPOLL;
  constexpr uint32_t kOptional[] = {
      IORING_SETUP_SUBMIT_ALL | IORING_SETUP_COOP_TASKRUN | IORING_SETUP_TASKRUN_FLAG |
          IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN,
      IORING_SETUP_SUBMIT_ALL | IORING_SETUP_COOP_TASKRUN | IORING_SETUP_TASKRUN_FLAG,
      0,
  };
  int ret = -EINVAL;
  for (uint32_t optional : kOptional) {
    io_uring_params p{};
    p.flags = required | optional;
    ret = io_uring_queue_init_params(plan.job->iodepth, ring, &p);
    if (ret == 0) {
      *used_flags = p.flags;
      return 0;
    }
    if (ret != -EINVAL) break;
  }
  return ret;
}

const char* RequiredOptionNames(const JobPlan& plan) {
  if (plan.job->hipri && plan.job->sqthread_poll) return " hipri (IOPOLL) + sqthread_poll (SQPOLL)";
  if (plan.job->hipri) return " hipri (IORING_SETUP_IOPOLL)";
  if (plan.job->sqthread_poll) return " sqthread_poll (IORING_SETUP_SQPOLL)";
  return "";
}

class UringEngine final : public IoEngine {
 public:
  bool Init(const EngineSetup& setup) override;
  QueueResult Queue(IoUnit& io) override;
  int Commit() override { return Submit(0) < 0 ? Failed("io_uring_enter (submit)", last_) : 0; }
  int GetEvents(uint32_t min, uint32_t max) override;
  IoUnit* Event(uint32_t i) override { return events_[i]; }
  void Cleanup() override;
  void PublishInternals(JobShared& out) override {
    out.ring_flags.store(flags_, std::memory_order_relaxed);
  }

 private:
  // fio_ioring_commit (+ the GETEVENTS wait of fio_ioring_getevents when wait_nr > 0):
  // one io_uring_enter submits everything uncommitted and, if asked, waits. 0 or -errno
  // (also kept in last_).
  int Submit(uint32_t wait_nr);
  io_uring_sqe* GetSqe();

  const JobPlan* plan_ = nullptr;
  SubmitLog* log_ = nullptr;
  IoUnit* units_ = nullptr;
  io_uring ring_{};
  int fd_arg_ = -1;  // the fd, or 0 = its registered index
  uint32_t flags_ = 0;
  int last_ = 0;
  // One private mapping: the reap batch and the units it took (iodepth entries each).
  void* arena_ = nullptr;
  size_t arena_bytes_ = 0;
  io_uring_cqe** cqes_ = nullptr;
  IoUnit** events_ = nullptr;
};

bool UringEngine::Init(const EngineSetup& s) {
  const JobPlan& plan = s.plan;
  plan_ = &plan;
  log_ = &s.log;
  units_ = s.units;
  const uint32_t depth = plan.job->iodepth;
  // Per slot: a CQE pointer and a unit pointer (arrays of pointers, on purpose) and an iovec.
  // NOLINTNEXTLINE(bugprone-sizeof-expression)
  constexpr size_t kSlotBytes = sizeof(io_uring_cqe*) + sizeof(IoUnit*) + sizeof(iovec);
  arena_bytes_ = depth * kSlotBytes;
  arena_ = MapMemory(arena_bytes_, false, s.reporter);
  if (arena_ == nullptr) return false;
  cqes_ = static_cast<io_uring_cqe**>(arena_);
  events_ = reinterpret_cast<IoUnit**>(cqes_ + depth);
  auto* iovecs = reinterpret_cast<iovec*>(events_ + depth);

  if (int r = SetupRing(plan, &ring_, &flags_); r < 0) {
    UnmapMemory(arena_, arena_bytes_);
    s.reporter.Fail(plan.job->hipri || plan.job->sqthread_poll ? absl::StatusCode::kInvalidArgument
                                                               : absl::StatusCode::kInternal,
                    -r, "job %u: io_uring_queue_init(entries=%u)%s: %s (errno %d)", plan.index,
                    depth, RequiredOptionNames(plan), ErrnoText(-r), -r);
    return false;
  }
  int err = 0;
  const char* what = nullptr;
  if (plan.job->registerfiles && (err = io_uring_register_files(&ring_, &s.fd, 1)) < 0) {
    what = "registerfiles: io_uring_register_files";
  } else if (plan.job->fixedbufs) {
    for (uint32_t i = 0; i < depth; ++i) iovecs[i] = {s.bufs + i * s.stride, s.stride};
    if ((err = io_uring_register_buffers(&ring_, iovecs, depth)) < 0) {
      what = "fixedbufs: io_uring_register_buffers";
    }
  }
  if (what != nullptr) {
    io_uring_queue_exit(&ring_);
    UnmapMemory(arena_, arena_bytes_);
    s.reporter.Fail(absl::StatusCode::kInvalidArgument, -err, "job %u: %s: %s (errno %d)",
                    plan.index, what, ErrnoText(-err), -err);
    return false;
  }
  io_uring_register_ring_fd(&ring_);  // optional: saves an fd lookup per io_uring_enter
  fd_arg_ = plan.job->registerfiles ? 0 : s.fd;
  return true;
}

// The SQ ring has >= iodepth entries and at most iodepth I/Os are queued or in flight, so
// without SQPOLL there is always a free SQE. With SQPOLL the kernel thread can post an
// I/O's completion (inline, for buffered files) before it commits the SQ head past that
// I/O's entry, so the ring can look full for a moment: flush what is uncommitted (waking
// the thread if it sleeps) and wait for it to consume entries (IORING_ENTER_SQ_WAIT).
io_uring_sqe* UringEngine::GetSqe() {
  io_uring_sqe* sqe = io_uring_get_sqe(&ring_);
  while (sqe == nullptr && plan_->job->sqthread_poll) {
    if (int r = Submit(0); r < 0 && r != -EINTR) return nullptr;
    if (int r = io_uring_sqring_wait(&ring_); r < 0 && r != -EINTR) return nullptr;
    sqe = io_uring_get_sqe(&ring_);
  }
  return sqe;
}

QueueResult UringEngine::Queue(IoUnit& io) {
  io_uring_sqe* sqe = GetSqe();
  if (sqe == nullptr) {
    Failed("io_uring_get_sqe (SQ ring full)", -EBUSY);
    return QueueResult::kBusy;
  }
  if (plan_->job->fixedbufs) {
    if (io.write) {
      io_uring_prep_write_fixed(sqe, fd_arg_, io.buf, io.len, io.offset,
                                static_cast<int>(io.index));
    } else {
      io_uring_prep_read_fixed(sqe, fd_arg_, io.buf, io.len, io.offset, static_cast<int>(io.index));
    }
  } else if (io.write) {
    io_uring_prep_write(sqe, fd_arg_, io.buf, io.len, io.offset);
  } else {
    io_uring_prep_read(sqe, fd_arg_, io.buf, io.len, io.offset);
  }
  if (plan_->job->registerfiles) sqe->flags |= IOSQE_FIXED_FILE;
  io_uring_sqe_set_data64(sqe, io.index);
  return QueueResult::kQueued;
}

int UringEngine::Submit(uint32_t wait_nr) {
  int r;
  if (wait_nr > 0) {
    r = io_uring_submit_and_wait(&ring_, wait_nr);
  } else if (plan_->job->sqthread_poll) {
    r = io_uring_submit(&ring_);  // the SQ thread submits; enter only to wake it
  } else {
    r = io_uring_submit_and_get_events(&ring_);  // also flushes deferred completions
  }
  if (r < 0) return last_ = r;
  log_->Committed(std::min<uint32_t>(static_cast<uint32_t>(r), log_->uncommitted));
  return last_ = 0;
}

// fio_ioring_getevents + fio_ioring_event: wait (submitting in the same io_uring_enter),
// then take the CQEs in one batch and give the CQ entries back at once.
int UringEngine::GetEvents(uint32_t min, uint32_t max) {
  if (min == 0) {
    // Polling: never sleep (fio iodepth_batch_complete_min=0).
    if (log_->uncommitted > 0) {
      if (int r = Submit(0); r < 0) return r == -EINTR ? r : Failed("io_uring_enter (submit)", r);
    } else if (io_uring_cq_ready(&ring_) == 0) {
      io_uring_get_events(&ring_);
    }
  } else if (log_->uncommitted > 0 || io_uring_cq_ready(&ring_) < min) {
    if (int r = Submit(min); r < 0) {
      return r == -EINTR ? r : Failed("io_uring_enter (submit+wait)", r);
    }
  }
  const unsigned n = io_uring_peek_batch_cqe(&ring_, cqes_, max);
  for (unsigned i = 0; i < n; ++i) {
    IoUnit* u = &units_[static_cast<uint32_t>(cqes_[i]->user_data)];
    u->result = cqes_[i]->res;
    events_[i] = u;
  }
  io_uring_cq_advance(&ring_, n);
  return static_cast<int>(n);
}

void UringEngine::Cleanup() {
  // The kernel tears a ring down asynchronously; drop the registered file now so the
  // target is no longer held open once this job reports done.
  if (plan_->job->registerfiles) io_uring_unregister_files(&ring_);
  io_uring_queue_exit(&ring_);
  UnmapMemory(arena_, arena_bytes_);
}

}  // namespace

std::unique_ptr<IoEngine> NewUringEngine() { return std::make_unique<UringEngine>(); }

}  // namespace blkbench
