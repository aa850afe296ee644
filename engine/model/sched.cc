// The elevator path of blk-mq (block/blk-mq-sched.c, blk-mq.c): scheduler tags with the
// elevator's limit_depth, bio_merge and insert_requests under the elevator's lock, the
// dispatch loop (blk_mq_sched_dispatch_requests -> __blk_mq_do_dispatch_sched ->
// blk_mq_dispatch_rq_list) with budgets and driver tags, and the completion hooks.
//
// Locks are taken at the simulator's `now` as the first work of a step, so that the
// qspinlock model sees arrivals in time order; the critical section's effect on the
// elevator happens at arrival (the FIFO order is the arrival order), and the CPU is
// busy until the grant's release.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "engine/model/engine.h"

namespace blkbench::engine {
namespace {

constexpr double kEmptyDispatchLines = 1;  // a dispatch that finds nothing reads the heads
constexpr double kInsertListLines = 1;     // dd-insert-lists: a list_add under its own lock

}  // namespace

absl::Status Engine::InitElevator(const ElevatorRegistry& elevators) {
  const ElevatorType* type = elevators.Find(config_.queue.scheduler);
  if (type == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("scheduler \"", config_.queue.scheduler, "\" is not modelled by the engine"));
  }
  elv_ = type->create(config_);
  if (type->lock != nullptr) {
    elv_lock_ = std::make_unique<Spinlock>(profile_, profile_.*(type->lock), type->lock_name);
  }
  if (type->insert_lock != nullptr && elv_->StagesInserts()) {
    insert_lock_ =
        std::make_unique<Spinlock>(profile_, profile_.*(type->insert_lock), type->insert_lock_name);
  }
  elv_dispatch_cost_ = profile_.stage.*(type->dispatch_cost);
  batch_dispatch_ = elv_->DispatchBatch();
  elv_lock_on_completion_ = elv_->LockOnCompletion();
  ElevatorQueueLimits limits;
  limits.nr_requests = depth_;
  limits.max_sectors = config_.queue.max_sectors;
  limits.rotational = device_->rotational();
  limits.hw_tags = device_->queue_depth() > 1;
  limits.nr_hw_queues = static_cast<uint32_t>(hctxs_.size());
  if (absl::Status s = elv_->Init(limits); !s.ok()) return s;
  // depth_updated -> sbitmap_queue_min_shallow_depth() (sizes wake_batch).
  if (const std::optional<uint32_t> min_shallow = elv_->MinShallowDepth()) {
    for (Hctx& h : hctxs_) h.tags->SetMinShallowDepth(*min_shallow);
  }
  sched_rqs_.resize(requests_.size());
  for (size_t i = 0; i < sched_rqs_.size(); ++i) sched_rqs_[i].id = i;
  elv_scratch_.reserve(2 * kBlkMaxRequestCount);
  elv_freed_.reserve(2 * kBlkMaxRequestCount);
  return absl::OkStatus();
}

// The shallow depth of blk_mq_alloc_data for the task's current bio (the elevator's
// limit_depth), in the units the sbitmap applies: a queue-wide depth (6.10+
// mq-deadline's async_depth) becomes a per-word one (dd_to_word_depth); whole-bitmap
// (6.17+) maps and other elevators apply the value as is.
std::optional<uint32_t> Engine::ShallowDepth(const Task& task) const {
  if (!elv_) return std::nullopt;
  std::optional<uint32_t> d = elv_->LimitDepth(task.bio_write, /*sync=*/true);
  if (!d) return d;
  const SbitmapQueue& sbq = *hctxs_[task.hctx].tags;
  if (elv_->LimitDepthIsQueueWide() && mechanisms_.shallow_mode == ShallowMode::kPerWord) {
    const uint64_t word = uint64_t{1} << sbq.sbitmap().shift();
    d = static_cast<uint32_t>(
        std::max<uint64_t>(1, (uint64_t{*d} * word + depth_ - 1) / std::max(1u, depth_)));
  }
  return std::max(*d, sbq.min_shallow_depth() == ~0u ? 1u : sbq.min_shallow_depth());
}

int Engine::GetSchedTag(Task& task, std::optional<uint32_t> shallow) {
  SbitmapQueue& sbq = *hctxs_[task.hctx].tags;
  return shallow ? sbq.GetShallow(task.cpu, *shallow) : sbq.Get(task.cpu);
}

// Locks are taken at `now` (or `at` for completions, which run on a CPU that may still
// be busy): arrivals must not go back in time, so a late one is queued at the last.
LockGrant Engine::TakeLock(Spinlock& lock, int cpu, SimTime cs_ns, Stage stage,
                           std::optional<double> missed_lines, SimTime at) {
  VirtualCpu& c = cpus_[cpu];
  SimTime arrival = std::max({sim_.now(), at, c.busy_until()});
  arrival = std::max(arrival, lock_last_arrival_);
  lock_last_arrival_ = arrival;
  const LockGrant g = missed_lines ? lock.Acquire(arrival, cpu, cs_ns, *missed_lines)
                                   : lock.Acquire(arrival, cpu, cs_ns);
  c.Account(Stage::kLockSpin, g.spin_ns);
  c.Account(stage, g.released - g.granted);
  c.OccupyUntil(g.released);
  return g;
}

// blk_mq_sched_bio_merge() -> dd_bio_merge(): under the elevator lock, try last_merge,
// the back-merge hash and a front merge. The bio then ends with the request it joined.
bool Engine::ElvBioMerge(Task& task) {
  if (task.bio_sectors_left > config_.queue.max_sectors) return false;  // REQ_NOMERGE front
  if (elv_lock_) TakeLock(*elv_lock_, task.cpu, profile_.stage.elevator_bio_merge, Stage::kMerge);
  SchedBio sbio;
  sbio.sector = task.bio_sector;
  sbio.sectors = static_cast<uint32_t>(task.bio_sectors_left);
  sbio.write = task.bio_write;
  sbio.sync = true;
  sbio.ioc = task.ioc;
  sbio.group = task.group;
  sbio.cpu = static_cast<uint32_t>(task.cpu);
  sbio.hctx = task.hctx;
  const BioMergeResult m = elv_->BioMerge(sbio);
  ElvAfterCall();
  if (m.type == MergeType::kNone) return false;
  const uint32_t index = IndexOf(*m.rq);
  Request& rq = requests_[index];
  const uint64_t bio = BioId(task.index, task.bio_io);
  if (m.type == MergeType::kBack) {
    Bio(rq.last_io).next = bio;
    rq.last_io = bio;
  } else {
    Bio(bio).next = rq.io;
    rq.io = bio;
  }
  ++rq.nr_bios;
  rq.sector = m.rq->sector;
  rq.sectors = m.rq->sectors;
  task.has_bio = false;
  task.bio_sectors_left = 0;
  ++counters_.elv_bio_merges;
  if (m.freed != nullptr)
    FreeMergedRequest(IndexOf(*m.freed), task.cpu, cpus_[task.cpu].busy_until());
  return true;
}

// Moves `src`'s bios onto `dst` (blk_attempt_req_merge: the bios of the request merged
// away end with the survivor).
void Engine::AppendBios(uint32_t dst, uint32_t src, bool front) {
  Request& d = requests_[dst];
  const Request& s = requests_[src];
  if (front) {
    Bio(s.last_io).next = d.io;
    d.io = s.io;
  } else {
    Bio(d.last_io).next = s.io;
    d.last_io = s.last_io;
  }
  d.nr_bios += s.nr_bios;
  const SchedRequest& sr = Srq(dst);
  d.sector = sr.sector;
  d.sectors = sr.sectors;
}

// elv_merge_requests() / an insert merge: `index` was merged away. finish_request, then
// the scheduler tag goes back (waking submitters).
void Engine::FreeMergedRequest(uint32_t index, int cpu, SimTime at) {
  SchedRequest& s = Srq(index);
  if (s.merged_into != nullptr) AppendBios(IndexOf(*s.merged_into), index, /*front=*/false);
  elv_->FinishRequest(s);
  ++counters_.elv_insert_merges;
  FreeTag(index / depth_, static_cast<int>(index % depth_), cpu, at);
}

// blk_mq_rq_ctx_init() + blk_mq_sched_prepare(): the request as the elevator sees it.
void Engine::PrepareSchedRequest(Task& task, uint32_t index) {
  const Request& rq = requests_[index];
  SchedRequest& s = Srq(index);
  s.sector = rq.sector;
  s.sectors = rq.sectors;
  s.write = rq.write;
  s.sync = true;  // O_DIRECT: REQ_SYNC for writes too
  s.ioprio = IoprioClass::kBe;
  s.submit_time_ns = sim_.now();
  s.merged_into = nullptr;
  s.ioc = task.ioc;
  s.group = task.group;
  s.cpu = static_cast<uint32_t>(task.cpu);
  s.hctx = task.hctx;
  requests_[index].driver_tag = -1;
  requests_[index].budget = false;
  elv_->PrepareRequest(s);
}

// blk_mq_dispatch_list() / blk_mq_insert_request(): insert_requests once for the batch
// under one lock hold, then run the hardware queue — synchronously for a plug flush
// from the submitter, async (kblockd) for an unplugged request or a from_schedule flush.
void Engine::InsertStep(Task& task) {
  const SimTime per = profile_.stage.elevator_insert;
  const SimTime n = static_cast<SimTime>(task.insert.size());
  elv_scratch_.clear();
  for (const uint32_t index : task.insert) elv_scratch_.push_back(&Srq(index));
  if (elv_->StagesInserts()) {
    // dd-insert-lists: a list_add per request under the insertion lock; sorting into
    // the elevator happens at dispatch under dd->lock.
    if (insert_lock_) {
      TakeLock(*insert_lock_, task.cpu, profile_.coherence.lock_uncontended * n, Stage::kInsert,
               kInsertListLines);
    }
    elv_->StageRequests(elv_scratch_);
  } else {
    if (elv_lock_) TakeLock(*elv_lock_, task.cpu, per * n, Stage::kInsert);
    elv_freed_.clear();
    elv_->InsertRequests(elv_scratch_, InsertFlags{}, sim_.now(), elv_freed_);
    for (SchedRequest* f : elv_freed_) {
      FreeMergedRequest(IndexOf(*f), task.cpu, cpus_[task.cpu].busy_until());
    }
  }
  task.insert.clear();
  ElvAfterCall();
  if (task.insert_run_sync) {
    if (!task.disp.active()) StartDispatch(task.disp, task.hctx);
  } else {
    ScheduleRun(task.hctx, task.cpu, cpus_[task.cpu].busy_until());
  }
}

bool Engine::ElvHasWork(uint32_t hctx) const { return elv_->HasWorkFor(hctx); }

// dd_has_work() and friends read the lists without the lock. The model removes a
// request from the elevator when its dispatcher arrives at the lock (arrival order is
// grant order), but on a machine the request is still on the lists until the grant, so
// other contexts see work, queue for the lock and find nothing: the wasted lock takes
// that grow with the number of dispatchers.
bool Engine::ElvHasWorkLockless(uint32_t hctx) {
  while (!dispatch_visible_until_.empty() && dispatch_visible_until_.front() <= sim_.now()) {
    dispatch_visible_until_.pop_front();
  }
  return ElvHasWork(hctx) || !dispatch_visible_until_.empty();
}

// blk_mq_run_hw_queue() -> blk_mq_sched_dispatch_requests(): nothing to do without work
// (has_work is lockless), else hctx->dispatch first, then the elevator.
void Engine::StartDispatch(Dispatcher& d, uint32_t hctx) {
  if (d.active()) {
    d.rerun = true;  // queue_work on a running work item: it runs once more
    return;
  }
  if (hctxs_[hctx].dispatch.empty() && !ElvHasWorkLockless(hctx)) return;
  d.hctx = hctx;
  d.phase = Dispatcher::Phase::kDrain;
  d.list.clear();
  d.pos = 0;
}

void Engine::DispatchStep(Dispatcher& d) {
  Hctx& hctx = hctxs_[d.hctx];
  switch (d.phase) {
    case Dispatcher::Phase::kIdle:
      return;
    case Dispatcher::Phase::kDrain:
      if (!hctx.dispatch.empty()) {
        // list_splice_init(&hctx->dispatch) under hctx->lock, then dispatch the list.
        cpus_[d.cpu].Run(sim_.now(), Stage::kDispatch, profile_.coherence.lock_uncontended);
        d.list.assign(hctx.dispatch.begin(), hctx.dispatch.end());
        hctx.dispatch.clear();
        d.pos = 0;
        d.from_drain = true;
        d.phase = Dispatcher::Phase::kIssue;
        return;
      }
      d.phase = Dispatcher::Phase::kCollect;
      d.max_dispatch = hctx.dispatch_busy ? 1 : static_cast<int>(depth_);
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
void Engine::CollectStep(Dispatcher& d) {
  Hctx& hctx = hctxs_[d.hctx];
  if (d.stop || d.max_dispatch <= 0 || !hctx.dispatch.empty() || !ElvHasWorkLockless(d.hctx)) {
    EndCollect(d);
    return;
  }
  const int want = !hctx.dispatch_busy ? std::min(batch_dispatch_, d.max_dispatch) : 1;
  const int got = ElvDispatch(d, want);
  d.max_dispatch -= got;
  if (got == 0) d.stop = true;
}

void Engine::FinishDispatch(Dispatcher& d) {
  d.phase = Dispatcher::Phase::kIdle;
  d.list.clear();
  d.pos = 0;
  if (d.rerun) {
    d.rerun = false;
    StartDispatch(d, d.hctx);
  }
}

void Engine::EndCollect(Dispatcher& d) {
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
int Engine::ElvDispatch(Dispatcher& d, int want) {
  const SimTime now = sim_.now();
  const std::optional<uint64_t> dispatching =
      elv_lock_ ? elv_->DispatchingUntil(now) : std::nullopt;
  if (dispatching) {
    // test_bit(DD_DISPATCHING): someone is dispatching; return NULL without the lock.
    // The next completion re-runs the queue (SCHED_RESTART) so nothing is stranded.
    cpus_[d.cpu].Run(now, Stage::kDispatch, profile_.coherence.same_node);
    ++counters_.elv_dispatch_skipped;
    Hctx& hctx = hctxs_[d.hctx];
    hctx.restart = true;
    if (device_->in_flight() == 0) ScheduleRun(d.hctx, d.cpu, *dispatching);
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
    if (!GetBudget()) {
      ++counters_.budget_fails;
      hctxs_[d.hctx].restart = true;
      d.stop = true;
      break;
    }
    ++counters_.elv_dispatch_calls;
    SchedRequest* s = elv_->DispatchRequestFor(d.hctx, now);
    if (s == nullptr) {
      PutBudget();
      ++counters_.elv_dispatch_null;
      empty = true;
      d.stop = true;
      break;
    }
    const uint32_t index = IndexOf(*s);
    Request& rq = requests_[index];
    rq.budget = has_budget_;
    rq.dispatch_seq = next_dispatch_seq_++;
    d.list.push_back(index);
    ++got;
    if (!GetDriverTag(index, d.cpu)) {
      d.stop = true;
      break;
    }
  }
  const SimTime cs = drained * profile_.stage.elevator_insert +
                     static_cast<SimTime>(got) * elv_dispatch_cost_ +
                     (empty ? profile_.coherence.lock_uncontended : 0);
  if (elv_lock_) {
    const LockGrant g = got == 0 && drained == 0
                            ? TakeLock(*elv_lock_, d.cpu, cs, Stage::kDispatch, kEmptyDispatchLines)
                            : TakeLock(*elv_lock_, d.cpu, cs, Stage::kDispatch);
    elv_->DispatchLockReleased(g.released);
    if (g.granted > now) {
      for (int i = 0; i < got; ++i) dispatch_visible_until_.push_back(g.granted);
    }
  } else {
    cpus_[d.cpu].Run(now, Stage::kDispatch, cs);
  }
  // Driver tags (blk_mq_get_driver_tag) after the lock in the base kernel.
  cpus_[d.cpu].Run(now, Stage::kTagAlloc, profile_.stage.tag_get_single * got);
  ElvAfterCall();
  return got;
}

// __blk_mq_get_driver_tag(): a driver tag for a request holding a sched tag; never sleeps.
bool Engine::GetDriverTag(uint32_t index, int cpu) {
  Request& rq = requests_[index];
  if (rq.driver_tag >= 0) return true;
  const int tag = hctxs_[index / depth_].driver_tags->Get(cpu);
  if (tag < 0) {
    ++counters_.driver_tag_fails;
    return false;
  }
  rq.driver_tag = tag;
  return true;
}

// blk_mq_dispatch_rq_list(), one request per step: budget and driver tag (already held
// unless the request came back from hctx->dispatch), then queue_rq. A request that
// cannot go leaves the rest of the list on hctx->dispatch with SCHED_RESTART set.
void Engine::IssueStep(Dispatcher& d) {
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
  Request& rq = requests_[index];
  if (!rq.budget && has_budget_) {
    if (!GetBudget()) {
      ++counters_.budget_fails;
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
  // An inversion: the device sees this request right after one the elevator handed
  // out later (rq1-rq3-rq2-rq4 for an elevator order 1-2-3-4).
  if (rq.dispatch_seq != 0) {
    if (rq.dispatch_seq < last_issued_seq_) ++counters_.dispatch_inversions;
    if (rq.dispatch_seq == last_issued_seq_ + 1) ++counters_.dispatch_in_order;
    last_issued_seq_ = rq.dispatch_seq;
  }
  cpus_[d.cpu].Run(sim_.now(), Stage::kDriver, profile_.stage.driver_queue_rq);
  Srq(index).io_start_time_ns = sim_.now();  // blk_mq_start_request()
  IssueToDriver(index, d.cpu, d.pid < 0);
  inline_completion_cpu_ = d.cpu;
  ArmCompletion();
  inline_completion_cpu_ = -1;
}

// The rest of the list goes back on hctx->dispatch (blk_mq_dispatch_rq_list's
// list_splice_tail_init) with its budgets released; SCHED_RESTART re-runs the queue on
// the next completion, and dispatch_busy makes the next pass dispatch one at a time.
void Engine::RequeueRest(Dispatcher& d) {
  for (size_t i = d.pos; i < d.list.size(); ++i) {
    const uint32_t index = d.list[i];
    Request& rq = requests_[index];
    if (rq.budget) {
      PutBudget();
      rq.budget = false;
    }
    Hctx& h = hctxs_[index / depth_];
    h.dispatch.push_back(index);
    h.restart = true;
    h.dispatch_busy = true;
    ++counters_.requeues;
  }
  FinishDispatch(d);
  if (device_->in_flight() == 0) ScheduleRun(d.hctx, d.cpu, cpus_[d.cpu].busy_until());
}

// blk_mq_end_request() with an elevator: completed_request, then finish_request (the
// lock for bfq), the driver tag, and the scheduler tag (waking submitters).
void Engine::ElvComplete(uint32_t index, int cpu, SimTime at) {
  Request& rq = requests_[index];
  SchedRequest& s = Srq(index);
  elv_->CompletedRequest(s, at);
  if (elv_lock_on_completion_ && elv_lock_) {
    TakeLock(*elv_lock_, cpu, profile_.stage.elevator_insert, Stage::kCompletion, std::nullopt, at);
  }
  elv_->FinishRequest(s);
  const uint32_t h = index / depth_;
  if (rq.driver_tag >= 0) {
    (void)hctxs_[h].driver_tags->Clear(static_cast<unsigned>(rq.driver_tag), cpu);
    rq.driver_tag = -1;
  }
  rq.budget = false;
  ElvAfterCall();
}

// After any call into the elevator: its timer may have moved, and it may have asked for
// hardware-queue runs (bfq_schedule_dispatch, kyber_domain_wake), which go to kblockd.
void Engine::ElvAfterCall() {
  const uint64_t deadline = elv_->TimerDeadline();
  if (deadline != elv_timer_at_) {
    if (elv_timer_event_.valid() && sim_.IsPending(elv_timer_event_)) sim_.Cancel(elv_timer_event_);
    elv_timer_event_ = EventId{};
    elv_timer_at_ = deadline;
    if (deadline != kNoTimer) {
      elv_timer_event_ = sim_.Schedule(std::max<SimTime>(deadline, sim_.now()), this, kElvTimer, 0);
    }
  }
  run_requests_.clear();
  elv_->TakeRunRequests(run_requests_);
  for (const uint32_t h : run_requests_) {
    if (h == kAllHwQueues) {
      for (uint32_t i = 0; i < hctxs_.size(); ++i) ScheduleRun(i, IrqCpu(i), sim_.now());
    } else if (h < hctxs_.size()) {
      ScheduleRun(h, IrqCpu(h), sim_.now());
    }
  }
}

// bfq_idle_slice_timer() (under bfqd->lock) / kyber_timer_fn(): the timer's body, then
// the queue runs it asked for.
void Engine::ElvTimerFired() {
  elv_timer_event_ = EventId{};
  elv_timer_at_ = kNoTimer;
  ++counters_.elv_timer_fires;
  const int cpu = IrqCpu(0);
  if (elv_lock_) TakeLock(*elv_lock_, cpu, profile_.coherence.lock_uncontended, Stage::kOther);
  elv_->TimerExpired(sim_.now());
  ElvAfterCall();
}

void Engine::KblockdStep(uint32_t h) {
  Hctx& hctx = hctxs_[h];
  Dispatcher& d = hctx.kblockd;
  d.step_pending = false;
  const SimTime busy = cpus_[d.cpu].busy_until();
  if (busy > sim_.now()) {
    d.step_pending = true;
    sim_.Schedule(busy, this, kKblockdStep, h);
    return;
  }
  DispatchStep(d);
  if (d.active()) {
    d.step_pending = true;
    sim_.Schedule(std::max(sim_.now(), cpus_[d.cpu].busy_until()), this, kKblockdStep, h);
  }
}

}  // namespace blkbench::engine
