// The io_uring job loop: fio's do_io() driving engines/io_uring.c (fio_ioring_queue /
// _commit / _getevents) with iodepth, iodepth_batch_submit and
// iodepth_batch_complete_min/max semantics, on a liburing ring of iodepth entries.
#include <errno.h>
#include <liburing.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "agent/executor/job.h"
#include "agent/executor/offsets.h"

namespace blkbench {
namespace {

// One I/O unit (fio's io_u, reduced to what completion needs). user_data = slot index.
struct Slot {
  uint64_t offset;
  uint64_t start_ns;  // fio "lat" start: when the job began preparing this I/O's batch
  uint8_t write;
  uint8_t measured;  // issued after ramp_time
};

// Everything the loop touches, in one private mapping: no malloc after fork().
struct Arena {
  Slot* slots;
  uint32_t* free_slots;  // stack of unused slot indexes
  io_uring_cqe** cqes;   // reap batch (complete_max entries)
  iovec* iovecs;         // fixed buffer registration
  size_t bytes;

  static size_t Size(uint32_t depth) {
    return depth * (sizeof(Slot) + sizeof(uint32_t) + sizeof(io_uring_cqe*) + sizeof(iovec)) + 64;
  }
  void Carve(void* base, uint32_t depth) {
    char* p = static_cast<char*>(base);
    slots = reinterpret_cast<Slot*>(p);
    p += depth * sizeof(Slot);
    cqes = reinterpret_cast<io_uring_cqe**>(AlignUp(reinterpret_cast<uintptr_t>(p), 8));
    p = reinterpret_cast<char*>(cqes + depth);
    iovecs = reinterpret_cast<iovec*>(p);
    p += depth * sizeof(iovec);
    free_slots = reinterpret_cast<uint32_t*>(p);
  }
};

// Ring setup like fio_ioring_queue_init: the options the job asked for (hipri →
// IOPOLL, sqthread_poll → SQPOLL) are required; the rest are optimisations tried
// best-first and dropped on EINVAL (older kernels, or DEFER_TASKRUN with SQPOLL).
// DEFER_TASKRUN + SINGLE_ISSUER: completions are posted only when this task enters the
// kernel to wait for them, so no IPIs or task_work interruptions (fio 3.33 does the same).
int SetupRing(const JobPlan& plan, io_uring* ring, uint32_t* used_flags) {
  uint32_t required = 0;
  if (plan.hipri) required |= IORING_SETUP_IOPOLL;
  if (plan.sqthread_poll) required |= IORING_SETUP_SQPOLL;
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
    ret = io_uring_queue_init_params(plan.iodepth, ring, &p);
    if (ret == 0) {
      *used_flags = p.flags;
      return 0;
    }
    if (ret != -EINVAL) break;
  }
  return ret;
}

const char* RequiredOptionNames(const JobPlan& plan) {
  if (plan.hipri && plan.sqthread_poll) return " hipri (IOPOLL) + sqthread_poll (SQPOLL)";
  if (plan.hipri) return " hipri (IORING_SETUP_IOPOLL)";
  if (plan.sqthread_poll) return " sqthread_poll (IORING_SETUP_SQPOLL)";
  return "";
}

// The running loop's state; Run() returns false with `err_*` set on an I/O error.
class UringLoop {
 public:
  UringLoop(const JobPlan& plan, io_uring* ring, int fd_arg, char* bufs, size_t stride,
            const Arena& a, JobReporter& rep, Phase& phase, JobShared& out)
      : plan_(plan),
        ring_(ring),
        fd_arg_(fd_arg),
        bufs_(bufs),
        stride_(stride),
        a_(a),
        rep_(rep),
        phase_(phase),
        out_(out),
        rec_(out),
        gen_(plan.io) {}

  bool Run();
  uint64_t now() const { return now_; }
  // Failure details: a CQE error or short transfer (io_failed) or an io_uring_enter error.
  bool io_failed = false;
  int err_res = 0;  // negative errno, or the short length
  uint64_t err_offset = 0;
  bool err_write = false;
  const char* err_call = nullptr;

 private:
  // 0, or a negative errno when no SQE could be had.
  int Prep(uint32_t idx, const NextIo& io);
  io_uring_sqe* GetSqe();
  int Submit(uint32_t wait_nr);
  void Reap(uint32_t want);

  const JobPlan& plan_;
  io_uring* ring_;
  const int fd_arg_;
  char* const bufs_;
  const size_t stride_;
  const Arena& a_;
  JobReporter& rep_;
  Phase& phase_;
  JobShared& out_;
  LatencyRecorder rec_;
  IoGenerator gen_;
  uint64_t now_ = 0;
  uint32_t nfree_ = 0, npending_ = 0, inflight_ = 0;
  uint64_t traced_ = 0;
  // Internals, published at the end.
  uint64_t submit_calls_ = 0, submitted_ = 0, max_submit_ = 0, reap_calls_ = 0, max_reap_ = 0,
           short_reaps_ = 0, max_inflight_ = 0;

 public:
  void PublishInternals() {
    out_.submit_calls.store(submit_calls_, std::memory_order_relaxed);
    out_.submitted.store(submitted_, std::memory_order_relaxed);
    out_.max_submit_batch.store(max_submit_, std::memory_order_relaxed);
    out_.reap_calls.store(reap_calls_, std::memory_order_relaxed);
    out_.max_reap_batch.store(max_reap_, std::memory_order_relaxed);
    out_.short_reaps.store(short_reaps_, std::memory_order_relaxed);
    out_.max_inflight.store(max_inflight_, std::memory_order_relaxed);
    out_.trace_len.store(std::min<uint64_t>(traced_, plan_.trace_capacity),
                         std::memory_order_relaxed);
  }
};

// The SQ ring has >= iodepth entries and at most iodepth I/Os are queued or in flight, so
// without SQPOLL there is always a free SQE. With SQPOLL the kernel thread can post an
// I/O's completion (inline, for buffered files) before it commits the SQ head past that
// I/O's entry, so the ring can look full for a moment: flush what is pending (waking the
// thread if it sleeps) and wait for it to consume entries (IORING_ENTER_SQ_WAIT).
io_uring_sqe* UringLoop::GetSqe() {
  io_uring_sqe* sqe = io_uring_get_sqe(ring_);
  while (sqe == nullptr && plan_.sqthread_poll) {
    if (int r = Submit(0); r < 0 && r != -EINTR) return nullptr;
    if (int r = io_uring_sqring_wait(ring_); r < 0 && r != -EINTR) return nullptr;
    sqe = io_uring_get_sqe(ring_);
  }
  return sqe;
}

int UringLoop::Prep(uint32_t idx, const NextIo& io) {
  io_uring_sqe* sqe = GetSqe();
  if (sqe == nullptr) return -EBUSY;
  Slot& s = a_.slots[idx];
  s.offset = io.offset;
  s.start_ns = now_;
  s.write = io.write;
  s.measured = phase_.measuring();
  void* buf = bufs_ + idx * stride_;
  const unsigned len = static_cast<unsigned>(plan_.io.block_size);
  if (plan_.fixedbufs) {
    if (io.write) {
      io_uring_prep_write_fixed(sqe, fd_arg_, buf, len, io.offset, static_cast<int>(idx));
    } else {
      io_uring_prep_read_fixed(sqe, fd_arg_, buf, len, io.offset, static_cast<int>(idx));
    }
  } else if (io.write) {
    io_uring_prep_write(sqe, fd_arg_, buf, len, io.offset);
  } else {
    io_uring_prep_read(sqe, fd_arg_, buf, len, io.offset);
  }
  if (plan_.registerfiles) sqe->flags |= IOSQE_FIXED_FILE;
  io_uring_sqe_set_data64(sqe, idx);
  if (traced_ < plan_.trace_capacity) {
    plan_.trace[traced_] = IoTrace{io.offset, len, io.write ? 1u : 0u};
  }
  ++traced_;
  ++npending_;
  return 0;
}

// fio_ioring_commit (+ the GETEVENTS wait of fio_ioring_getevents when wait_nr > 0):
// one io_uring_enter submits everything pending and, if asked, waits for completions.
int UringLoop::Submit(uint32_t wait_nr) {
  int r;
  if (wait_nr > 0) {
    r = io_uring_submit_and_wait(ring_, wait_nr);
  } else if (plan_.sqthread_poll) {
    r = io_uring_submit(ring_);  // the SQ thread submits; enter only to wake it
  } else {
    r = io_uring_submit_and_get_events(ring_);  // also flushes deferred completions
  }
  if (r < 0) return r;
  const uint32_t n = std::min<uint32_t>(static_cast<uint32_t>(r), npending_);
  if (n > 0) {
    ++submit_calls_;
    submitted_ += n;
    max_submit_ = std::max<uint64_t>(max_submit_, n);
  }
  npending_ -= n;
  inflight_ += n;
  max_inflight_ = std::max<uint64_t>(max_inflight_, inflight_);
  return 0;
}

// fio ios_completed: one clock read for the whole batch (as fio does), then per CQE the
// latency bucket, the slot back on the free stack; scalars flushed once per batch.
void UringLoop::Reap(uint32_t want) {
  const unsigned n = io_uring_peek_batch_cqe(ring_, a_.cqes, plan_.complete_max);
  now_ = MonotonicNs();
  const uint32_t len = static_cast<uint32_t>(plan_.io.block_size);
  for (unsigned i = 0; i < n; ++i) {
    const io_uring_cqe* c = a_.cqes[i];
    const uint32_t idx = static_cast<uint32_t>(c->user_data);
    const Slot& s = a_.slots[idx];
    if (c->res != static_cast<int32_t>(len)) {
      if (!io_failed) {
        io_failed = true;
        err_res = c->res;
        err_offset = s.offset;
        err_write = s.write;
      }
    } else if (s.measured) {
      rec_.Record(s.write, now_ - s.start_ns, len);
    }
    a_.free_slots[nfree_++] = idx;
  }
  io_uring_cq_advance(ring_, n);
  inflight_ -= n;
  rec_.Flush();
  if (n > 0) ++reap_calls_;
  max_reap_ = std::max<uint64_t>(max_reap_, n);
  if (n < want) ++short_reaps_;
  phase_.Update(now_);
}

bool UringLoop::Run() {
  const uint32_t depth = plan_.iodepth;
  for (uint32_t i = 0; i < depth; ++i) a_.free_slots[i] = depth - 1 - i;
  nfree_ = depth;
  now_ = MonotonicNs();
  bool fresh = true;  // now_ was read after the last syscall
  bool issuing = true;
  phase_.Update(now_);
  for (;;) {
    if (phase_.expired() || rep_.stop_requested() || io_failed) issuing = false;
    // Queue (fio do_io → td_io_queue): fill up to iodepth, submitting every
    // iodepth_batch_submit I/Os while more can still be queued.
    while (issuing && nfree_ > 0) {
      if (!fresh) {
        now_ = MonotonicNs();
        fresh = true;
        phase_.Update(now_);
        if (phase_.expired()) {
          issuing = false;
          break;
        }
      }
      if (!phase_.Take(plan_.io.block_size)) {
        issuing = false;
        break;
      }
      if (int r = Prep(a_.free_slots[nfree_ - 1], gen_.Next()); r < 0) {
        err_res = r;
        err_call = "io_uring_get_sqe (SQ ring full)";
        return false;
      }
      --nfree_;
      if (npending_ >= plan_.batch_submit && nfree_ > 0) {
        if (int r = Submit(0); r < 0 && r != -EINTR) {
          err_res = r;
          err_call = "io_uring_enter (submit)";
          return false;
        }
        fresh = false;
      }
    }
    if (inflight_ + npending_ == 0) break;
    // Reap (fio wait_for_completions / cleanup_pending_aio): the queue is full or
    // nothing more will be issued. Wait for min(complete_min, outstanding), at least one;
    // whatever is pending is submitted by the same io_uring_enter.
    const uint32_t outstanding = inflight_ + npending_;
    const uint32_t want = std::max<uint32_t>(1, std::min(plan_.complete_min, outstanding));
    if (plan_.complete_min == 0) {
      // fio iodepth_batch_complete_min=0: never sleep, keep polling the CQ ring.
      if (int r = Submit(0); r < 0 && r != -EINTR) {
        err_res = r;
        err_call = "io_uring_enter (submit)";
        return false;
      }
      if (inflight_ == 0) continue;  // interrupted before anything went out
      while (io_uring_cq_ready(ring_) == 0) io_uring_get_events(ring_);
    } else if (npending_ > 0 || io_uring_cq_ready(ring_) < want) {
      if (int r = Submit(want); r < 0) {
        if (r == -EINTR) continue;
        err_res = r;
        err_call = "io_uring_enter (submit+wait)";
        return false;
      }
    }
    Reap(want);
    fresh = true;
  }
  return !io_failed;
}

}  // namespace

void RunUringJob(const JobPlan& plan, Control& ctl, JobShared& out) {
  JobReporter rep(ctl, out);
  if (!ApplyAffinity(plan, rep)) return;
  const int fd = OpenTarget(plan, rep);
  if (fd < 0) return;
  const uint32_t depth = plan.iodepth;
  const size_t stride = AlignUp(plan.io.block_size, 4096);
  const size_t buf_bytes = stride * depth;
  char* bufs = static_cast<char*>(MapMemory(buf_bytes, plan.open_for_write, rep));
  void* arena_mem = bufs ? MapMemory(Arena::Size(depth), false, rep) : nullptr;
  if (arena_mem == nullptr) {
    UnmapMemory(bufs, buf_bytes);
    close(fd);
    return;
  }
  Arena arena{};
  arena.Carve(arena_mem, depth);
  auto cleanup = [&] {
    UnmapMemory(arena_mem, Arena::Size(depth));
    UnmapMemory(bufs, buf_bytes);
    close(fd);
  };

  io_uring ring{};
  uint32_t flags = 0;
  if (int r = SetupRing(plan, &ring, &flags); r < 0) {
    cleanup();
    rep.Fail(plan.hipri || plan.sqthread_poll ? absl::StatusCode::kInvalidArgument
                                              : absl::StatusCode::kInternal,
             -r, "job %u: io_uring_queue_init(entries=%u)%s: %s (errno %d)", plan.index, depth,
             RequiredOptionNames(plan), ErrnoText(-r), -r);
    return;
  }
  out.ring_flags.store(flags, std::memory_order_relaxed);
  int setup_err = 0;
  const char* what = nullptr;
  if (plan.registerfiles && (setup_err = io_uring_register_files(&ring, &fd, 1)) < 0) {
    what = "registerfiles: io_uring_register_files";
  } else if (plan.fixedbufs) {
    for (uint32_t i = 0; i < depth; ++i) arena.iovecs[i] = {bufs + i * stride, stride};
    if ((setup_err = io_uring_register_buffers(&ring, arena.iovecs, depth)) < 0) {
      what = "fixedbufs: io_uring_register_buffers";
    }
  }
  if (what != nullptr) {
    io_uring_queue_exit(&ring);
    cleanup();
    rep.Fail(absl::StatusCode::kInvalidArgument, -setup_err, "job %u: %s: %s (errno %d)",
             plan.index, what, ErrnoText(-setup_err), -setup_err);
    return;
  }
  io_uring_register_ring_fd(&ring);  // optional: saves an fd lookup per io_uring_enter

  rep.Ready();
  if (!rep.WaitForGo()) {
    io_uring_queue_exit(&ring);
    cleanup();
    rep.Done();
    return;
  }
  Phase phase(plan, ctl);
  UringLoop loop(plan, &ring, plan.registerfiles ? 0 : fd, bufs, stride, arena, rep, phase, out);
  const bool ok = loop.Run();
  phase.Finish(loop.now(), out);
  loop.PublishInternals();
  // The kernel tears a ring down asynchronously; drop the registered file now so the
  // target is no longer held open once this job reports done.
  if (plan.registerfiles) io_uring_unregister_files(&ring);
  io_uring_queue_exit(&ring);
  cleanup();
  if (ok) {
    rep.Done();
    return;
  }
  const int res = loop.err_res;
  if (!loop.io_failed) {
    rep.Fail(absl::StatusCode::kInternal, -res, "job %u: %s on %s: %s (errno %d)", plan.index,
             loop.err_call, plan.path, ErrnoText(-res), -res);
    return;
  }
  const char* op = loop.err_write ? "write" : "read";
  const unsigned long long off = loop.err_offset;
  if (res >= 0) {
    rep.Fail(absl::StatusCode::kInternal, EIO,
             "job %u: short %s at offset %llu on %s: %d of %llu bytes", plan.index, op, off,
             plan.path, res, static_cast<unsigned long long>(plan.io.block_size));
  } else if (plan.hipri && (res == -EOPNOTSUPP || res == -EINVAL)) {
    rep.Fail(absl::StatusCode::kInvalidArgument, -res,
             "job %u: hipri (IORING_SETUP_IOPOLL): polled %s at offset %llu on %s failed: %s "
             "(errno %d); the device does not support polled I/O (no poll queues?)",
             plan.index, op, off, plan.path, ErrnoText(-res), -res);
  } else {
    rep.Fail(absl::StatusCode::kInternal, -res,
             "job %u: io_uring %s at offset %llu on %s: %s (errno %d)", plan.index, op, off,
             plan.path, ErrnoText(-res), -res);
  }
}

}  // namespace blkbench
