// The dispatchers of blk-mq's elevator path: blk_mq_run_hw_queue ->
// blk_mq_sched_dispatch_requests -> __blk_mq_do_dispatch_sched -> blk_mq_dispatch_rq_list,
// one elevator call per step (a submitter after its plug flush, or the hctx's kblockd
// work), with the lockless has_work, budgets, driver tags and requeue on hctx->dispatch.
//
// Locks are taken at the simulator's `now` as the first work of a step (see sched.cc).
#include <algorithm>

#include "engine/model/completion.h"
#include "engine/model/hw_queues.h"
#include "engine/model/sched_path.h"

namespace blkbench::engine {

bool SchedPath::ElvHasWork(uint32_t hctx) const { return elv_->HasWorkFor(hctx); }

// dd_has_work() and friends read the lists without the lock. The model removes a
// request from the elevator when its dispatcher arrives at the lock (arrival order is
// grant order), but on a machine the request is still on the lists until the grant, so
// other contexts see work, queue for the lock and find nothing: the wasted lock takes
// that grow with the number of dispatchers.
bool SchedPath::ElvHasWorkLockless(uint32_t hctx) {
  while (!dispatch_visible_until_.empty() && dispatch_visible_until_.front() <= q_.sim.now()) {
    dispatch_visible_until_.pop_front();
  }
  return ElvHasWork(hctx) || !dispatch_visible_until_.empty();
}

// blk_mq_run_hw_queue() -> blk_mq_sched_dispatch_requests(): nothing to do without work
// (has_work is lockless), else hctx->dispatch first, then the elevator.
void SchedPath::StartDispatch(Dispatcher& d, uint32_t hctx) {
  if (d.active()) {
    d.rerun = true;  // queue_work on a running work item: it runs once more
    return;
  }
  if (q_.hctxs[hctx].dispatch.empty() && !ElvHasWorkLockless(hctx)) return;
  d.hctx = hctx;
  d.phase = Dispatcher::Phase::kDrain;
  d.list.clear();
  d.pos = 0;
}

void SchedPath::DispatchStep(Dispatcher& d) {
  Hctx& hctx = q_.hctxs[d.hctx];
  switch (d.phase) {
    case Dispatcher::Phase::kIdle:
      return;
    case Dispatcher::Phase::kDrain:
      if (!hctx.dispatch.empty()) {
        // list_splice_init(&hctx->dispatch) under hctx->lock, then dispatch the list.
        q_.cpus[d.cpu].Run(q_.sim.now(), Stage::kDispatch, q_.profile.coherence.lock_uncontended);
        d.list.assign(hctx.dispatch.begin(), hctx.dispatch.end());
        hctx.dispatch.clear();
        d.pos = 0;
        d.from_drain = true;
        d.phase = Dispatcher::Phase::kIssue;
        return;
      }
      d.phase = Dispatcher::Phase::kCollect;
      d.max_dispatch = hctx.dispatch_busy ? 1 : static_cast<int>(q_.depth);
      d.stop = false;
      CollectStep(d);
      return;
    case Dispatcher::Phase::kCollect:
      CollectStep(d);
      return;
    case Dispatcher::Phase::kIssue:
      IssueStep(d);
      return;
  }
}

// One iteration of __blk_mq_do_dispatch_sched()'s loop: has_work, a budget, one
// dispatch_request under the lock (or several with a batch-dispatch patch), a driver tag.
void SchedPath::CollectStep(Dispatcher& d) {
  Hctx& hctx = q_.hctxs[d.hctx];
  if (d.stop || d.max_dispatch <= 0 || !hctx.dispatch.empty() || !ElvHasWorkLockless(d.hctx)) {
    EndCollect(d);
    return;
  }
  const int want = !hctx.dispatch_busy ? std::min(batch_dispatch_, d.max_dispatch) : 1;
  const int got = ElvDispatch(d, want);
  d.max_dispatch -= got;
  if (got == 0) d.stop = true;
}

void SchedPath::FinishDispatch(Dispatcher& d) {
  d.phase = Dispatcher::Phase::kIdle;
  d.list.clear();
  d.pos = 0;
  if (d.rerun) {
    d.rerun = false;
    StartDispatch(d, d.hctx);
  }
}

void SchedPath::EndCollect(Dispatcher& d) {
  if (d.list.empty()) {
    FinishDispatch(d);
    return;
  }
  d.pos = 0;
  d.phase = Dispatcher::Phase::kIssue;
}

// Takes the elevator lock once and calls dispatch_request up to `want` times, each
// request with a budget and a driver tag (the batch-dispatch patch gets them under the
// lock; the base kernel calls once per hold). Returns the requests added to d.list.
int SchedPath::ElvDispatch(Dispatcher& d, int want) {
  const SimTime now = q_.sim.now();
  const std::optional<uint64_t> dispatching =
      elv_lock_ ? elv_->DispatchingUntil(now) : std::nullopt;
  if (dispatching) {
    // test_bit(DD_DISPATCHING): someone is dispatching; return NULL without the lock.
    // The next completion re-runs the queue (SCHED_RESTART) so nothing is stranded.
    q_.cpus[d.cpu].Run(now, Stage::kDispatch, q_.profile.coherence.same_node);
    ++q_.counters.elv_dispatch_skipped;
    Hctx& hctx = q_.hctxs[d.hctx];
    hctx.restart = true;
    if (q_.device->in_flight() == 0) q_.hw->ScheduleRun(d.hctx, d.cpu, *dispatching);
    return 0;
  }
  // dd-insert-lists: the insertion lists are sorted in first, under dd->lock.
  elv_freed_.clear();
  const SimTime drained = static_cast<SimTime>(elv_->SortStaged(now, elv_freed_));
  for (SchedRequest* f : elv_freed_) FreeMergedRequest(IndexOf(*f), d.cpu, now);
  // blk_mq_dispatch_rq_list() hands other hctxs' requests to their own queues; the
  // per-hctx elevators (kyber) are asked for this hctx only.
  int got = 0;
  bool empty = false;
  for (int i = 0; i < want; ++i) {
    if (!q_.hw->GetBudget()) {
      ++q_.counters.budget_fails;
      q_.hctxs[d.hctx].restart = true;
      d.stop = true;
      break;
    }
    ++q_.counters.elv_dispatch_calls;
    SchedRequest* s = elv_->DispatchRequestFor(d.hctx, now);
    if (s == nullptr) {
      q_.hw->PutBudget();
      ++q_.counters.elv_dispatch_null;
      empty = true;
      d.stop = true;
      break;
    }
    const uint32_t index = IndexOf(*s);
    Request& rq = q_.requests[index];
    rq.budget = q_.has_budget;
    if (rq.dispatch_seq != 0) issue_order_.Withdrawn(rq.dispatch_seq);
    rq.dispatch_seq = next_dispatch_seq_++;
    issue_order_.HandedOut(rq.dispatch_seq);
    d.list.push_back(index);
    ++got;
    if (!GetDriverTag(index, d.cpu)) {
      d.stop = true;
      break;
    }
  }
  const SimTime cs = drained * q_.profile.stage.elevator_insert +
                     static_cast<SimTime>(got) * elv_dispatch_cost_ +
                     (empty ? q_.profile.coherence.lock_uncontended : 0);
  if (elv_lock_) {
    // Lines missed: the first request's, each further one's of a batch, and for
    // dd-insert-lists each staged request sorted in; or an empty dispatch's.
    double lines = lines_.insert_extra * static_cast<double>(drained);
    if (got > 0) {
      lines += lines_.dispatch_first + lines_.dispatch_extra * static_cast<double>(got - 1);
    } else if (drained == 0) {
      lines = lines_.dispatch_empty;
    }
    const LockGrant g = TakeLock(*elv_lock_, d.cpu, cs, Stage::kDispatch, lines);
    elv_->DispatchLockReleased(g.released);
    if (g.granted > now) {
      for (int i = 0; i < got; ++i) dispatch_visible_until_.push_back(g.granted);
    }
  } else {
    q_.cpus[d.cpu].Run(now, Stage::kDispatch, cs);
  }
  // Driver tags (blk_mq_get_driver_tag) after the lock in the base kernel.
  q_.cpus[d.cpu].Run(now, Stage::kTagAlloc, q_.profile.stage.tag_get_single * got);
  ElvAfterCall();
  return got;
}

// __blk_mq_get_driver_tag(): a driver tag for a request holding a sched tag; never sleeps.
bool SchedPath::GetDriverTag(uint32_t index, int cpu) {
  Request& rq = q_.requests[index];
  if (rq.driver_tag >= 0) return true;
  const int tag = q_.hctxs[index / q_.depth].driver_tags->Get(cpu);
  if (tag < 0) {
    ++q_.counters.driver_tag_fails;
    return false;
  }
  rq.driver_tag = tag;
  return true;
}

// blk_mq_dispatch_rq_list(), one request per step: budget and driver tag (already held
// unless the request came back from hctx->dispatch), then queue_rq. A request that
// cannot go leaves the rest of the list on hctx->dispatch with SCHED_RESTART set.
void SchedPath::IssueStep(Dispatcher& d) {
  if (d.pos >= d.list.size()) {
    const bool drained = d.from_drain;
    d.from_drain = false;
    d.list.clear();
    d.pos = 0;
    // blk_mq_sched_dispatch_requests(): after a successful drain the elevator runs;
    // __blk_mq_do_dispatch_sched() is repeated while it makes progress.
    if (drained || !d.stop) {
      d.phase = Dispatcher::Phase::kDrain;
    } else {
      FinishDispatch(d);
    }
    return;
  }
  const uint32_t index = d.list[d.pos];
  Request& rq = q_.requests[index];
  if (!rq.budget && q_.has_budget) {
    if (!q_.hw->GetBudget()) {
      ++q_.counters.budget_fails;
      RequeueRest(d);
      return;
    }
    rq.budget = true;
  }
  if (!GetDriverTag(index, d.cpu)) {
    RequeueRest(d);
    return;
  }
  ++d.pos;
  rq.issue_cpu = d.cpu;
  // Dispatch order against the elevator's (seed 000's 1-3-2-4: t1 and t2 take rq1..rq4
  // in turn under the lock, then t1 issues rq1, rq3 and t2 rq2, rq4). Over the device: an
  // inversion is an issue right after one the elevator handed out later, and the pairs
  // issued in opposite order are counted (IssueOrder). Per hardware queue: an issue in
  // order follows that queue's previous issue in the elevator's order, which a
  // dispatcher's own list does only when no other dispatcher took requests in between.
  if (rq.dispatch_seq != 0) {
    if (rq.dispatch_seq < last_issued_seq_) ++q_.counters.dispatch_inversions;
    if (rq.dispatch_seq == last_issued_seq_ + 1) ++q_.counters.dispatch_in_order;
    last_issued_seq_ = rq.dispatch_seq;
    Hctx& hctx = q_.hctxs[d.hctx];
    if (rq.dispatch_seq == hctx.last_issued_seq + 1) ++q_.counters.dispatch_hctx_in_order;
    hctx.last_issued_seq = rq.dispatch_seq;
    q_.counters.dispatch_inverted_pairs += issue_order_.Issued(rq.dispatch_seq);
    rq.dispatch_seq = 0;  // the tag's next request starts unnumbered
  }
  q_.cpus[d.cpu].Run(q_.sim.now(), Stage::kDriver, q_.profile.stage.driver_queue_rq);
  Srq(index).io_start_time_ns = q_.sim.now();  // blk_mq_start_request()
  q_.hw->IssueToDriver(index, d.cpu, d.pid < 0);
  q_.inline_completion_cpu = d.cpu;
  q_.completion->ArmCompletion();
  q_.inline_completion_cpu = -1;
}

// The rest of the list goes back on hctx->dispatch (blk_mq_dispatch_rq_list's
// list_splice_tail_init) with its budgets released; SCHED_RESTART re-runs the queue on
// the next completion, and dispatch_busy makes the next pass dispatch one at a time.
void SchedPath::RequeueRest(Dispatcher& d) {
  for (size_t i = d.pos; i < d.list.size(); ++i) {
    const uint32_t index = d.list[i];
    Request& rq = q_.requests[index];
    if (rq.budget) {
      q_.hw->PutBudget();
      rq.budget = false;
    }
    Hctx& h = q_.hctxs[index / q_.depth];
    h.dispatch.push_back(index);
    h.restart = true;
    h.dispatch_busy = true;
    ++q_.counters.requeues;
  }
  FinishDispatch(d);
  if (q_.device->in_flight() == 0) q_.hw->ScheduleRun(d.hctx, d.cpu, q_.cpus[d.cpu].busy_until());
}

void SchedPath::KblockdStep(uint32_t h) {
  Hctx& hctx = q_.hctxs[h];
  Dispatcher& d = hctx.kblockd;
  d.step_pending = false;
  const SimTime busy = q_.cpus[d.cpu].busy_until();
  if (busy > q_.sim.now()) {
    d.step_pending = true;
    q_.sim.Schedule(busy, q_.handler, kKblockdStep, h);
    return;
  }
  DispatchStep(d);
  if (d.active()) {
    d.step_pending = true;
    q_.sim.Schedule(std::max(q_.sim.now(), q_.cpus[d.cpu].busy_until()), q_.handler, kKblockdStep,
                    h);
  }
}

}  // namespace blkbench::engine
