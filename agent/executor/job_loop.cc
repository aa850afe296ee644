// The one job loop every I/O engine runs under: fio's do_io() (backend.c) with
// td_io_queue / td_io_commit / io_u_queued_complete, keeping iodepth I/Os queued or in
// flight with iodepth_batch_submit and iodepth_batch_complete_min/max semantics, and the
// set-up and teardown around it (target, buffers, engine init, start barrier).
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "agent/executor/io_engine.h"
#include "agent/executor/job.h"
#include "agent/executor/offsets.h"

namespace blkbench {
namespace {

// The loop's state for one job; Run() returns false with the failure details set.
class JobLoop {
 public:
  JobLoop(const JobPlan& plan, IoEngine& engine, IoUnit* units, uint32_t* free_units,
          SubmitLog& log, JobReporter& rep, Phase& phase, JobShared& out)
      : plan_(plan),
        engine_(engine),
        units_(units),
        free_(free_units),
        log_(log),
        rep_(rep),
        phase_(phase),
        out_(out),
        rec_(out),
        gen_(plan.io) {}

  bool Run();
  uint64_t now() const { return now_; }
  void PublishInternals() const;

  // Failure details: an I/O that failed or came back short (io_failed), or an engine call
  // that failed (err_call).
  bool io_failed = false;
  int64_t err_res = 0;  // negative errno, or the short length
  uint64_t err_offset = 0;
  bool err_write = false;
  const char* err_call = nullptr;

 private:
  bool Fail(int r) {
    err_res = r;
    err_call = engine_.failed_call();
    return false;
  }
  // Fills the next free unit; false when the budget is used up.
  void Prepare(IoUnit& u);
  // One completed unit: stats (if measured) or the first failure, and the unit is free.
  void Complete(const IoUnit& u) {
    if (u.result != static_cast<int64_t>(u.len)) {
      if (!io_failed) {
        io_failed = true;
        err_res = u.result;
        err_offset = u.offset;
        err_write = u.write;
      }
    } else if (u.measured) {
      rec_.Record(u.write, now_ - u.start_ns, u.len);
    }
    free_[nfree_++] = u.index;
  }
  // fio ios_completed: one clock read for the whole batch of n events.
  void Reap(uint32_t n, uint32_t want);
  void Trace(const IoUnit& u) {
    if (traced_ < plan_.trace_capacity) {
      plan_.trace[traced_] = IoTrace{u.offset, u.len, u.write ? 1u : 0u};
    }
    ++traced_;
  }

  const JobPlan& plan_;
  IoEngine& engine_;
  IoUnit* const units_;
  uint32_t* const free_;  // stack of unused unit indexes
  SubmitLog& log_;
  JobReporter& rep_;
  Phase& phase_;
  JobShared& out_;
  LatencyRecorder rec_;
  IoGenerator gen_;
  NextIo held_{};  // an I/O the engine was busy for, offered again first
  bool have_held_ = false;
  uint64_t now_ = 0;
  uint32_t nfree_ = 0;
  uint64_t traced_ = 0;
  uint64_t reap_calls_ = 0, max_reap_ = 0, short_reaps_ = 0;
};

void JobLoop::Prepare(IoUnit& u) {
  const NextIo io = have_held_ ? held_ : gen_.Next();
  have_held_ = false;
  u.offset = io.offset;
  u.write = io.write;
  u.start_ns = now_;
  u.measured = phase_.measuring();
}

void JobLoop::Reap(uint32_t n, uint32_t want) {
  now_ = MonotonicNs();
  for (uint32_t i = 0; i < n; ++i) Complete(*engine_.Event(i));
  log_.inflight -= n;
  rec_.Flush();
  if (n > 0) ++reap_calls_;
  max_reap_ = std::max<uint64_t>(max_reap_, n);
  if (n < want) ++short_reaps_;
  phase_.Update(now_);
}

bool JobLoop::Run() {
  const uint32_t depth = plan_.job->iodepth;
  const uint64_t bs = plan_.io.block_size;
  for (uint32_t i = 0; i < depth; ++i) free_[i] = depth - 1 - i;
  nfree_ = depth;
  now_ = MonotonicNs();
  bool fresh = true;  // now_ was read after the last system call
  bool issuing = true;
  phase_.Update(now_);
  for (;;) {
    if (phase_.expired() || rep_.stop_requested() || io_failed) issuing = false;
    // Queue (fio do_io → td_io_queue): fill up to iodepth, committing every
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
      if (!phase_.Take(bs)) {
        issuing = false;
        break;
      }
      IoUnit& u = units_[free_[nfree_ - 1]];
      Prepare(u);
      ++log_.uncommitted;  // before Queue(): an engine may commit it at once
      const QueueResult q = engine_.Queue(u);
      if (q == QueueResult::kBusy) {
        // fio: requeue the io_u, commit, reap, try again.
        --log_.uncommitted;
        phase_.Untake(bs);
        held_ = {u.offset, u.write != 0};
        have_held_ = true;
        if (nfree_ == depth) return Fail(-EBUSY);  // busy with nothing to wait for
        break;
      }
      Trace(u);
      --nfree_;
      if (q == QueueResult::kCompleted) {
        // A sync engine: one clock read per I/O, which also starts the next one.
        log_.Committed(1);
        now_ = MonotonicNs();
        Complete(u);
        log_.inflight -= 1;
        rec_.Flush();
        phase_.Update(now_);
        if (io_failed || rep_.stop_requested() || phase_.expired()) issuing = false;
        continue;
      }
      if (log_.uncommitted >= plan_.job->batch_submit && nfree_ > 0) {
        if (int r = engine_.Commit(); r < 0 && r != -EINTR) return Fail(r);
        fresh = false;
      }
    }
    const uint32_t outstanding = depth - nfree_;
    if (outstanding == 0) break;
    // Reap (fio wait_for_completions / cleanup_pending_aio): the queue is full, the engine
    // is busy, or nothing more will be issued. Wait for min(complete_min, outstanding), at
    // least one; GetEvents commits what is uncommitted first.
    const uint32_t want = std::max<uint32_t>(1, std::min(plan_.job->complete_min, outstanding));
    int n;
    if (plan_.job->complete_min == 0) {
      // fio iodepth_batch_complete_min=0: never sleep, keep polling for completions.
      while ((n = engine_.GetEvents(0, plan_.job->complete_max)) == 0 || n == -EINTR) {
      }
    } else {
      n = engine_.GetEvents(want, plan_.job->complete_max);
      if (n == -EINTR) continue;
    }
    if (n < 0) return Fail(n);
    Reap(static_cast<uint32_t>(n), want);
    fresh = true;
  }
  return !io_failed;
}

void JobLoop::PublishInternals() const {
  out_.submit_calls.store(log_.calls, std::memory_order_relaxed);
  out_.submitted.store(log_.submitted, std::memory_order_relaxed);
  out_.max_submit_batch.store(log_.max_batch, std::memory_order_relaxed);
  out_.max_inflight.store(log_.max_inflight, std::memory_order_relaxed);
  out_.reap_calls.store(reap_calls_, std::memory_order_relaxed);
  out_.max_reap_batch.store(max_reap_, std::memory_order_relaxed);
  out_.short_reaps.store(short_reaps_, std::memory_order_relaxed);
  out_.trace_len.store(std::min<uint64_t>(traced_, plan_.trace_capacity),
                       std::memory_order_relaxed);
}

void ReportFailure(const JobPlan& plan, const JobLoop& loop, JobReporter& rep) {
  const int64_t res = loop.err_res;
  if (!loop.io_failed) {
    const int err = static_cast<int>(-res);
    rep.Fail(absl::StatusCode::kInternal, err, "job %u: %s on %s: %s (errno %d)", plan.index,
             loop.err_call, plan.path, ErrnoText(err), err);
    return;
  }
  const char* op = loop.err_write ? "write" : "read";
  const unsigned long long off = loop.err_offset;
  const int err = static_cast<int>(-res);
  if (res >= 0) {
    rep.Fail(absl::StatusCode::kInternal, EIO,
             "job %u: short %s at offset %llu on %s: %lld of %llu bytes", plan.index, op, off,
             plan.path, static_cast<long long>(res),
             static_cast<unsigned long long>(plan.io.block_size));
  } else if (plan.job->hipri && (err == EOPNOTSUPP || err == EINVAL)) {
    rep.Fail(absl::StatusCode::kInvalidArgument, err,
             "job %u: hipri (%s polled I/O): polled %s at offset %llu on %s failed: %s "
             "(errno %d); the device does not support polled I/O (no poll queues?)",
             plan.index, plan.engine_name, op, off, plan.path, ErrnoText(err), err);
  } else {
    rep.Fail(absl::StatusCode::kInternal, err, "job %u: %s %s at offset %llu on %s: %s (errno %d)",
             plan.index, plan.engine_name, op, off, plan.path, ErrnoText(err), err);
  }
}

}  // namespace

void RunJob(const JobPlan& plan, IoEngine& engine, Control& ctl, JobShared& out) {
  JobReporter rep(ctl, out);
  if (!ApplyAffinity(plan, rep)) return;
  const int fd = OpenTarget(plan, rep);
  if (fd < 0) return;
  const uint32_t depth = plan.job->iodepth;
  const size_t stride = AlignUp(plan.io.block_size, 4096);
  const size_t buf_bytes = stride * depth;
  const size_t meta_bytes = depth * (sizeof(IoUnit) + sizeof(uint32_t));
  char* bufs = static_cast<char*>(MapMemory(buf_bytes, plan.job->writes, rep));
  void* meta = bufs ? MapMemory(meta_bytes, false, rep) : nullptr;
  if (meta == nullptr) {
    UnmapMemory(bufs, buf_bytes);
    close(fd);
    return;
  }
  auto* units = static_cast<IoUnit*>(meta);
  auto* free_units = reinterpret_cast<uint32_t*>(units + depth);
  for (uint32_t i = 0; i < depth; ++i) {
    units[i] =
        IoUnit{bufs + i * stride, 0, 0, 0, static_cast<uint32_t>(plan.io.block_size), i, 0, 0};
  }
  auto release = [&] {
    UnmapMemory(meta, meta_bytes);
    UnmapMemory(bufs, buf_bytes);
    close(fd);
  };
  SubmitLog log;
  if (!engine.Init(EngineSetup{plan, fd, units, bufs, stride, log, rep})) {
    release();
    return;
  }

  rep.Ready();
  if (!rep.WaitForGo()) {
    engine.Cleanup();
    release();
    rep.Done();
    return;
  }
  Phase phase(plan, ctl);
  JobLoop loop(plan, engine, units, free_units, log, rep, phase, out);
  const bool ok = loop.Run();
  phase.Finish(loop.now(), out);
  loop.PublishInternals();
  engine.PublishInternals(out);
  engine.Cleanup();
  release();
  if (ok) {
    rep.Done();
  } else {
    ReportFailure(plan, loop, rep);
  }
}

}  // namespace blkbench
