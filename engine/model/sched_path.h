// SchedPath: the elevator path of blk-mq (block/blk-mq-sched.c) — the elevator from the
// registry with its locks, scheduler tags with limit_depth, bio_merge and
// insert_requests under the elevator lock, the dispatchers (submitters after a plug
// flush, kblockd) with budgets and driver tags, the completion hooks and the timer.
// The core sees the elevator only through the Elevator interface.
#ifndef BLKBENCH_ENGINE_MODEL_SCHED_PATH_H_
#define BLKBENCH_ENGINE_MODEL_SCHED_PATH_H_

#include <array>
#include <deque>
#include <memory>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "engine/model/blk_mq.h"
#include "engine/model/issue_order.h"
#include "engine/sched/elevator.h"
#include "engine/model/elevator_registry.h"
#include "engine/sim/spinlock.h"

namespace blkbench::engine {

class SchedPath {
 public:
  explicit SchedPath(BlkMq& q) : q_(q) {}

  // Builds config.queue.scheduler from `elevators` (after the tags and the request
  // pool exist). InvalidArgument for a scheduler that is not registered; the
  // elevator's own Init() errors.
  absl::Status Init(const ElevatorRegistry& elevators);
  // false for scheduler "none": no other method may be called then.
  bool enabled() const { return elv_ != nullptr; }

  // limit_depth for the task's current bio, in the sbitmap's units (nullopt: none).
  std::optional<uint32_t> ShallowDepth(const Task& task) const;
  // A scheduler tag (or a driver tag with "none") for the task, honouring `shallow`.
  int GetSchedTag(Task& task, std::optional<uint32_t> shallow);
  // blk_mq_sched_bio_merge(): true if the task's bio was merged into a queued request.
  bool BioMerge(Task& task);
  // prepare_request for a freshly allocated request.
  void PrepareRequest(Task& task, uint32_t index);
  // insert_requests for task.insert under one lock hold, then the queue run.
  void InsertStep(Task& task);
  // blk_mq_run_hw_queue() for the dispatcher `d` (inline: the caller steps it).
  void StartDispatch(Dispatcher& d, uint32_t hctx);
  // One step of `d` (one elevator call, one lock take at most).
  void DispatchStep(Dispatcher& d);
  // kblockd's dispatcher of `hctx` (kKblockdStep, and a kRunQueue with an elevator).
  void KblockdStep(uint32_t hctx);
  // blk_mq_end_request() with an elevator: completed/finish_request, driver tag.
  void Complete(uint32_t index, int cpu, SimTime at);
  // kElvTimer.
  void TimerFired();

  const Elevator* elevator() const { return elv_.get(); }
  const Spinlock* lock() const { return elv_lock_.get(); }
  const Spinlock* insert_lock() const { return insert_lock_.get(); }
  // The locks' statistics since ResetLockBases() (lock: lock() or insert_lock()).
  LockStats LockStatsSinceRamp(const Spinlock& lock) const;
  // One lock's takes from one call site (the stage the hold is charged to: kMerge for
  // bio_merge, kInsert, kDispatch, kCompletion, kOther for the timer and has_work) since
  // ResetLockBases(), so the spin can be placed where the kernel's profile would show it.
  struct SiteStats {
    uint64_t acquisitions = 0;
    SimTime spin_ns = 0;
    SimTime hold_ns = 0;
  };
  SiteStats SiteStatsSinceRamp(const Spinlock& lock, Stage site) const;
  void ResetLockBases();

 private:
  int ElvDispatch(Dispatcher& d, int want);
  void CollectStep(Dispatcher& d);
  void IssueStep(Dispatcher& d);
  void EndCollect(Dispatcher& d);
  void FinishDispatch(Dispatcher& d);
  void RequeueRest(Dispatcher& d);
  bool ElvHasWork(uint32_t hctx) const;
  bool ElvHasWorkLockless(uint32_t hctx);
  bool GetDriverTag(uint32_t index, int cpu);
  void FreeMergedRequest(uint32_t index, int cpu, SimTime at);
  void AppendBios(uint32_t dst, uint32_t src, bool front);
  void ElvAfterCall();
  LockGrant TakeLock(Spinlock& lock, int cpu, SimTime cs_ns, Stage stage,
                     std::optional<double> missed_lines = std::nullopt, SimTime at = 0);
  SchedRequest& Srq(uint32_t index) { return sched_rqs_[index]; }
  uint32_t IndexOf(const SchedRequest& rq) const { return static_cast<uint32_t>(rq.id); }

  BlkMq& q_;
  std::unique_ptr<Elevator> elv_;
  std::unique_ptr<Spinlock> elv_lock_;     // dd->lock / bfqd->lock (kyber: none)
  std::unique_ptr<Spinlock> insert_lock_;  // dd-insert-lists: the insertion lists' lock
  std::vector<SchedRequest> sched_rqs_;    // parallel to BlkMq::requests
  std::vector<SchedRequest*> elv_scratch_;
  std::vector<SchedRequest*> elv_freed_;
  SimTime lock_last_arrival_ = 0;
  // Lock grant times of requests taken out of the elevator by dispatchers still queued
  // for the lock: until then a lockless has_work still sees them (ascending; FIFO lock).
  std::deque<SimTime> dispatch_visible_until_;
  uint64_t next_dispatch_seq_ = 1;
  uint64_t last_issued_seq_ = 0;
  IssueOrder issue_order_;  // pairs issued against the elevator's hand-out order
  EventId elv_timer_event_;
  uint64_t elv_timer_at_ = kNoTimer;
  std::vector<uint32_t> run_requests_;
  SimTime elv_dispatch_cost_ = 0;
  LockSiteLines lines_;  // the elevator lock's missed lines per call site
  bool elv_lock_on_completion_ = false;
  int batch_dispatch_ = 1;  // dispatch_request calls per lock hold (Elevator::DispatchBatch)
  LockStats elv_lock_base_, insert_lock_base_;
  using Sites = std::array<SiteStats, kStageCount>;
  // [0] the elevator lock, [1] the insertion lock; totals and their values at the ramp end.
  std::array<Sites, 2> sites_{}, site_bases_{};
  int SlotOf(const Spinlock& lock) const { return &lock == insert_lock_.get() ? 1 : 0; }
};

}  // namespace blkbench::engine

#endif  // BLKBENCH_ENGINE_MODEL_SCHED_PATH_H_
