// The libaio engine: Linux native aio through libaio (fio engines/libaio.c:
// fio_libaio_queue / _commit / _getevents / _event). io_setup(iodepth); queue() only
// prepares an iocb, commit() io_submit()s the batch, getevents() io_getevents(min, max)
// until min are in, as fio's libaio does with iodepth_batch_complete_min/max.
// Without direct=1 the kernel completes buffered I/O inside io_submit (fio warns the same).
#include <libaio.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <memory>

#include "agent/executor/engine_registry.h"
#include "agent/executor/io_engine.h"

namespace blkbench {
namespace {

// Back-off when io_submit says EAGAIN with nothing of ours in flight to reap (fio's
// fio_libaio_commit sleeps 100 µs likewise).
constexpr useconds_t kEagainBackoffUs = 100;

class LibaioEngine final : public IoEngine {
 public:
  bool Init(const EngineSetup& setup) override;
  QueueResult Queue(IoUnit& io) override;
  int Commit() override;
  int GetEvents(uint32_t min, uint32_t max) override;
  IoUnit* Event(uint32_t i) override { return done_[i]; }
  void Cleanup() override;

 private:
  SubmitLog* log_ = nullptr;
  int fd_ = -1;
  io_context_t ctx_ = nullptr;
  uint32_t npending_ = 0;  // iocbs queued, not yet io_submit()ted: pending_[0..npending_)
  // One private mapping, iodepth entries each: an iocb per unit, the pending batch, the
  // reaped events and the units they completed.
  void* arena_ = nullptr;
  size_t arena_bytes_ = 0;
  iocb* iocbs_ = nullptr;
  iocb** pending_ = nullptr;
  io_event* events_ = nullptr;
  IoUnit** done_ = nullptr;
};

bool LibaioEngine::Init(const EngineSetup& s) {
  log_ = &s.log;
  fd_ = s.fd;
  const uint32_t depth = s.plan.job->iodepth;
  arena_bytes_ = depth * (sizeof(iocb) + sizeof(iocb*) + sizeof(io_event) + sizeof(IoUnit*));
  arena_ = MapMemory(arena_bytes_, false, s.reporter);
  if (arena_ == nullptr) return false;
  iocbs_ = static_cast<iocb*>(arena_);
  events_ = reinterpret_cast<io_event*>(iocbs_ + depth);
  pending_ = reinterpret_cast<iocb**>(events_ + depth);
  done_ = reinterpret_cast<IoUnit**>(pending_ + depth);
  if (int r = io_setup(static_cast<int>(depth), &ctx_); r < 0) {
    UnmapMemory(arena_, arena_bytes_);
    s.reporter.Fail(
        r == -EAGAIN ? absl::StatusCode::kResourceExhausted : absl::StatusCode::kInternal, -r,
        "job %u: libaio: io_setup(%u): %s (errno %d)%s", s.plan.index, depth, ErrnoText(-r), -r,
        r == -EAGAIN ? "; iodepth × jobs exceeds /proc/sys/fs/aio-max-nr" : "");
    return false;
  }
  return true;
}

QueueResult LibaioEngine::Queue(IoUnit& io) {
  iocb* cb = &iocbs_[io.index];
  if (io.write) {
    io_prep_pwrite(cb, fd_, io.buf, io.len, static_cast<long long>(io.offset));
  } else {
    io_prep_pread(cb, fd_, io.buf, io.len, static_cast<long long>(io.offset));
  }
  cb->data = &io;
  pending_[npending_++] = cb;
  return QueueResult::kQueued;
}

int LibaioEngine::Commit() {
  uint32_t off = 0;
  int ret = 0;
  while (off < npending_) {
    const int r = io_submit(ctx_, static_cast<long>(npending_ - off), pending_ + off);
    if (r > 0) {
      log_->Committed(static_cast<uint32_t>(r));
      off += static_cast<uint32_t>(r);
    } else if (r == -EINTR) {
      continue;
    } else if (r == 0 || r == -EAGAIN) {
      // Out of kernel resources: reap what is in flight first, or wait a little.
      if (log_->inflight > 0) break;
      usleep(kEagainBackoffUs);
    } else {
      ret = Failed("libaio io_submit", r);
      break;
    }
  }
  npending_ -= off;
  if (npending_ > 0 && off > 0) memmove(pending_, pending_ + off, npending_ * sizeof(iocb*));
  return ret;
}

int LibaioEngine::GetEvents(uint32_t min, uint32_t max) {
  if (npending_ > 0) {
    if (int r = Commit(); r < 0) return r;
  }
  // What was not committed (EAGAIN) cannot complete: wait only for what is in flight.
  if (min > log_->inflight) min = log_->inflight;
  timespec zero{0, 0};
  uint32_t got = 0;
  do {
    const int r =
        io_getevents(ctx_, static_cast<long>(min > got ? min - got : 0),
                     static_cast<long>(max - got), events_ + got, min == 0 ? &zero : nullptr);
    if (r > 0) {
      got += static_cast<uint32_t>(r);
    } else if (r == -EINTR) {
      if (got == 0) return r;
    } else if (r < 0) {
      return Failed("libaio io_getevents", r);
    } else if (min == 0) {
      break;
    }
  } while (got < min);
  for (uint32_t i = 0; i < got; ++i) {
    IoUnit* u = static_cast<IoUnit*>(events_[i].data);
    // res is the byte count or a negative errno in an unsigned long.
    u->result = static_cast<int64_t>(static_cast<long>(events_[i].res));
    done_[i] = u;
  }
  return static_cast<int>(got);
}

void LibaioEngine::Cleanup() {
  io_destroy(ctx_);  // waits for whatever is still in flight
  UnmapMemory(arena_, arena_bytes_);
}

}  // namespace

std::unique_ptr<IoEngine> NewLibaioEngine() { return std::make_unique<LibaioEngine>(); }

}  // namespace blkbench
