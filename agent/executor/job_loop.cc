// The one job loop every I/O engine runs under: fio's do_io() (backend.c) with
// td_io_queue / td_io_commit / io_u_queued_complete, keeping iodepth I/Os queued or in
// flight with iodepth_batch_submit and iodepth_batch_complete_min/max semantics, and the
// set-up and teardown around it (target, buffers, engine init, start barrier).
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>

#include "agent/executor/io_engine.h"
#include "agent/executor/job.h"
#include "agent/executor/offsets.h"
#include "agent/executor/pacing.h"

namespace blkbench {
namespace {

// The loop's state for one job; Run() returns false with the failure details set.
class JobLoop {
 public:
  JobLoop(const JobPlan& plan, int fd, IoEngine& engine, IoUnit* units, uint32_t* free_units,
          SubmitLog& log, JobReporter& rep, Phase& phase, JobShared& out)
      : plan_(plan),
        fd_(fd),
        engine_(engine),
        units_(units),
        free_(free_units),
        log_(log),
        rep_(rep),
        phase_(phase),
        out_(out),
        rec_(out),
        gen_(plan.io),
        pacer_(*plan.job, plan.io.seed),
        paced_(pacer_.active()) {}

  bool Run();
  uint64_t now() const { return now_; }
  void PublishInternals() const;

  // Failure details: an I/O that failed or came back short (io_failed), or an engine call
  // that failed (err_call).
  bool io_failed = false;
  int64_t err_res = 0;  // negative errno, or the short length
  uint64_t err_offset = 0;
  uint32_t err_len = 0;
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
        err_len = u.len;
        err_write = u.write;
      }
    } else if (u.measured) {
      rec_.Record(u.write, now_ - u.start_ns, u.len);
    }
    free_[nfree_++] = u.index;
    if (paced_) pacer_.Completed();
  }
  // Nothing is in flight and the pacer holds the next I/O: sync, think or wait for the
  // rate's due time. False when an fsync failed.
  bool Pause();
  // The engine's Sync of the target (fsync=N, end_fsync); false with the failure recorded.
  bool Fsync();
  // fio ios_completed: one clock read for the whole batch of n events.
  void Reap(uint32_t n, uint32_t want);
  void Trace(const IoUnit& u) {
    if (traced_ < plan_.trace_capacity) {
      plan_.trace[traced_] = IoTrace{u.offset, u.len, u.write ? 1u : 0u};
    }
    ++traced_;
  }

  const JobPlan& plan_;
  const int fd_;
  IoEngine& engine_;
  IoUnit* const units_;
  uint32_t* const free_;  // stack of unused unit indexes
  SubmitLog& log_;
  JobReporter& rep_;
  Phase& phase_;
  JobShared& out_;
  LatencyRecorder rec_;
  IoGenerator gen_;
  Pacer pacer_;
  const bool paced_;
  uint64_t fsyncs_ = 0;
  NextIo held_{};  // the next I/O, drawn ahead (pacing, the budget) or refused as busy
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
  u.len = io.len;
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

// Sleeps until `until_ns` on CLOCK_MONOTONIC (MonotonicNs's clock).
void SleepUntil(uint64_t until_ns) {
  const timespec ts{static_cast<time_t>(until_ns / 1'000'000'000u),
                    static_cast<long>(until_ns % 1'000'000'000u)};
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) == EINTR) {
  }
}

bool JobLoop::Fsync() {
  if (const int r = engine_.Sync(fd_); r < 0) {
    io_failed = false;
    err_res = r;
    err_call = "fsync";
    return false;
  }
  ++fsyncs_;
  return true;
}

bool JobLoop::Pause() {
  // Long waits are cut into slices so a stop or the deadline ends them.
  constexpr uint64_t kSliceNs = 10'000'000;
  if (pacer_.sync_pending()) {
    pacer_.SyncDone();
    if (!Fsync()) return false;
  } else if (pacer_.think_pending()) {
    // fio handle_thinktime: spin for thinktime_spin, sleep the rest.
    const uint64_t start = MonotonicNs();
    const uint64_t spin_end = start + pacer_.spin_ns();
    while (MonotonicNs() < spin_end) {
    }
    const uint64_t end = start + pacer_.think_ns();
    for (uint64_t t = MonotonicNs(); t < end && !rep_.stop_requested(); t = MonotonicNs()) {
      SleepUntil(std::min(end, t + kSliceNs));
    }
    pacer_.ThinkDone();
  } else {
    const uint64_t due = pacer_.due(held_.write);
    const uint64_t t = MonotonicNs();
    if (due > t) SleepUntil(std::min(due, t + kSliceNs));
  }
  now_ = MonotonicNs();
  phase_.Update(now_);
  return true;
}

bool JobLoop::Run() {
  const uint32_t depth = plan_.job->iodepth;
  for (uint32_t i = 0; i < depth; ++i) free_[i] = depth - 1 - i;
  nfree_ = depth;
  now_ = MonotonicNs();
  bool fresh = true;  // now_ was read after the last system call
  bool issuing = true;
  phase_.Update(now_);
  pacer_.Start(now_);
  for (;;) {
    if (phase_.expired() || rep_.stop_requested() || io_failed) issuing = false;
    bool held = false;  // the pacer holds the next I/O back
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
      if (!have_held_) {
        held_ = gen_.Next();
        have_held_ = true;
      }
      if (paced_ && !pacer_.MayIssue(held_.write, now_)) {
        held = true;
        break;
      }
      if (!phase_.Take(held_.len)) {
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
        phase_.Untake(u.len);
        held_ = {u.offset, u.write != 0, u.len};
        have_held_ = true;
        if (nfree_ == depth) return Fail(-EBUSY);  // busy with nothing to wait for
        break;
      }
      Trace(u);
      --nfree_;
      if (paced_) pacer_.Issued(u.write, u.len);
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
    if (outstanding == 0) {
      if (!held) break;
      if (!Pause()) return false;
      fresh = true;
      continue;
    }
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
  if (!io_failed && plan_.job->end_fsync && plan_.job->writes && !Fsync()) return false;
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
  out_.fsyncs.store(fsyncs_, std::memory_order_relaxed);
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
             plan.path, static_cast<long long>(res), static_cast<unsigned long long>(loop.err_len));
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

// nice and prio/prioclass for the calling thread (a job's process, or its thread: Linux
// keeps both per thread). fio sets them in its thread_main.
bool ApplyPriority(const JobPlan& plan, JobReporter& rep) {
  const ResolvedJob& j = *plan.job;
  if (j.nice != 0 && setpriority(PRIO_PROCESS, static_cast<id_t>(gettid()), j.nice) != 0) {
    const int err = errno;
    rep.Fail(absl::StatusCode::kFailedPrecondition, err, "job %u: nice %d: setpriority: %s",
             plan.index, j.nice, ErrnoText(err));
    return false;
  }
  if (j.ioprio_class != 0) {
    constexpr int kIoprioWhoProcess = 1;  // IOPRIO_WHO_PROCESS; who 0 = the calling thread
    constexpr int kIoprioClassShift = 13;
    const int value = static_cast<int>(j.ioprio_class << kIoprioClassShift | j.ioprio_level);
    if (syscall(SYS_ioprio_set, kIoprioWhoProcess, 0, value) != 0) {
      const int err = errno;
      rep.Fail(absl::StatusCode::kFailedPrecondition, err,
               "job %u: prioclass %u prio %u: ioprio_set: %s", plan.index, j.ioprio_class,
               j.ioprio_level, ErrnoText(err));
      return false;
    }
  }
  return true;
}

// fio startdelay: the job waits this long after the common start before its first I/O
// (the executor moved the measured phase and the deadline by the same amount).
void StartDelay(const JobPlan& plan, JobReporter& rep) {
  const uint64_t end = MonotonicNs() + plan.job->startdelay_ns;
  for (uint64_t t = MonotonicNs(); t < end && !rep.stop_requested(); t = MonotonicNs()) {
    SleepUntil(std::min(end, t + 10'000'000));
  }
}

}  // namespace

void RunJob(const JobPlan& plan, IoEngine& engine, Control& ctl, JobShared& out) {
  JobReporter rep(ctl, out);
  if (!ApplyAffinity(plan, rep) || !ApplyPriority(plan, rep)) return;
  const int fd = OpenTarget(plan, rep);
  if (fd < 0) return;
  const uint32_t depth = plan.job->iodepth;
  // Every unit's buffer holds the largest block size (bsrange, bssplit).
  const size_t stride = AlignUp(std::max({plan.io.block_size, plan.io.bs_max,
                                          plan.io.write_block_size, plan.io.write_bs_max}),
                                4096);
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
  if (plan.job->startdelay_ns != 0) StartDelay(plan, rep);
  Phase phase(plan, ctl);
  JobLoop loop(plan, fd, engine, units, free_units, log, rep, phase, out);
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
