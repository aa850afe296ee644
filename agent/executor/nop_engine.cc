// The nop engine: every request completes without a system call and without touching the
// target (fio engines/null.c, ioengine=null), so a run measures the framework alone — job
// loop, offsets, stats, pacing — as t/io_uring -N1 does for fio. Like fio's null it is
// synchronous at iodepth 1 (queue() completes the unit) and asynchronous above: queue()
// parks the unit, commit() "submits" the batch, getevents() hands it back at once
// (fio_null_queue / _commit / _getevents / _event). fsync=N and end_fsync sync nothing.
// The loop still opens the target as for any engine; reads leave the buffers as they are.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "agent/executor/engine_registry.h"
#include "agent/executor/io_engine.h"

namespace blkbench {
namespace {

// One ring slot: a pointer to a unit the loop lent.
// NOLINTNEXTLINE(bugprone-sizeof-expression)
constexpr size_t kSlotBytes = sizeof(IoUnit*);

class NopEngine final : public IoEngine {
 public:
  bool Init(const EngineSetup& s) override;
  QueueResult Queue(IoUnit& io) override;
  int Commit() override;
  int GetEvents(uint32_t min, uint32_t max) override;
  IoUnit* Event(uint32_t i) override { return ring_[(taken_ + i) % depth_]; }
  int Sync(int /*fd*/) override { return 0; }
  void Cleanup() override { UnmapMemory(ring_, depth_ * kSlotBytes); }

 private:
  SubmitLog* log_ = nullptr;
  // FIFO of the units the loop lent: ring_[head_ ..) holds `done_` committed (complete)
  // units, then `pending_` uncommitted ones; the loop never lends more than depth_.
  IoUnit** ring_ = nullptr;
  uint32_t depth_ = 0, head_ = 0, done_ = 0, pending_ = 0;
  uint32_t taken_ = 0;  // where the last GetEvents' units start, for Event()
};

bool NopEngine::Init(const EngineSetup& s) {
  log_ = &s.log;
  depth_ = s.plan.job->iodepth;
  ring_ = static_cast<IoUnit**>(MapMemory(depth_ * kSlotBytes, false, s.reporter));
  return ring_ != nullptr;
}

QueueResult NopEngine::Queue(IoUnit& io) {
  io.result = io.len;
  if (depth_ == 1) return QueueResult::kCompleted;  // fio: FIO_SYNCIO at iodepth 1
  ring_[(head_ + done_ + pending_) % depth_] = &io;
  ++pending_;
  return QueueResult::kQueued;
}

int NopEngine::Commit() {
  log_->Committed(pending_);
  done_ += pending_;
  pending_ = 0;
  return 0;
}

int NopEngine::GetEvents(uint32_t min, uint32_t max) {
  (void)min;  // everything committed is complete: never waits
  Commit();
  const uint32_t n = std::min(done_, max);
  taken_ = head_;
  head_ = (head_ + n) % depth_;
  done_ -= n;
  return static_cast<int>(n);
}

}  // namespace

std::unique_ptr<IoEngine> NewNopEngine() { return std::make_unique<NopEngine>(); }

}  // namespace blkbench
