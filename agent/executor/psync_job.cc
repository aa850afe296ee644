// The psync job loop: one pread/pwrite at a time (fio engines/sync.c fio_psyncio_queue,
// always iodepth 1).
#include <errno.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "agent/executor/job.h"
#include "agent/executor/offsets.h"

namespace blkbench {

void RunPsyncJob(const JobPlan& plan, Control& ctl, JobShared& out) {
  JobReporter rep(ctl, out);
  if (!ApplyAffinity(plan, rep)) return;
  const int fd = OpenTarget(plan, rep);
  if (fd < 0) return;
  const size_t len = plan.io.block_size;
  void* buf = MapMemory(len, plan.open_for_write, rep);
  if (buf == nullptr) {
    close(fd);
    return;
  }
  rep.Ready();
  if (!rep.WaitForGo()) {
    UnmapMemory(buf, len);
    close(fd);
    rep.Done();
    return;
  }

  Phase phase(plan, ctl);
  LatencyRecorder rec(out);
  IoGenerator gen(plan.io);
  uint64_t traced = 0;
  // One clock read per I/O: the completion time of one I/O is the start of the next,
  // so an I/O's latency also covers the few ns of bookkeeping before its syscall
  // (fio's "lat" likewise starts before the I/O is prepared).
  uint64_t now = MonotonicNs();
  phase.Update(now);
  ssize_t bad = 0;
  int err = 0;
  NextIo io{};
  while (!phase.expired() && !rep.stop_requested()) {
    if (!phase.Take(len)) break;
    const bool measured = phase.measuring();
    io = gen.Next();
    if (traced < plan.trace_capacity) {
      plan.trace[traced] = IoTrace{io.offset, static_cast<uint32_t>(len), io.write ? 1u : 0u};
    }
    ++traced;
    const uint64_t start = now;
    ssize_t r;
    do {
      r = io.write ? pwrite(fd, buf, len, static_cast<off_t>(io.offset))
                   : pread(fd, buf, len, static_cast<off_t>(io.offset));
    } while (r < 0 && errno == EINTR);
    now = MonotonicNs();
    if (r != static_cast<ssize_t>(len)) {
      bad = r;
      err = r < 0 ? errno : EIO;
      break;
    }
    if (measured) {
      rec.Record(io.write, now - start, len);
      rec.Flush();
    }
    phase.Update(now);
  }
  phase.Finish(now, out);
  out.max_inflight.store(traced > 0 ? 1 : 0, std::memory_order_relaxed);
  out.submitted.store(traced, std::memory_order_relaxed);
  out.trace_len.store(std::min<uint64_t>(traced, plan.trace_capacity), std::memory_order_relaxed);
  UnmapMemory(buf, len);
  close(fd);
  if (err == 0) {
    rep.Done();
  } else if (bad >= 0) {
    rep.Fail(absl::StatusCode::kInternal, EIO,
             "job %u: short %s at offset %llu on %s: %zd of %zu bytes", plan.index,
             io.write ? "pwrite" : "pread", static_cast<unsigned long long>(io.offset), plan.path,
             bad, len);
  } else {
    rep.Fail(absl::StatusCode::kInternal, err, "job %u: %s at offset %llu on %s: %s (errno %d)",
             plan.index, io.write ? "pwrite" : "pread", static_cast<unsigned long long>(io.offset),
             plan.path, ErrnoText(err), err);
  }
}

}  // namespace blkbench
