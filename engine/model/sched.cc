// The elevator path of blk-mq (block/blk-mq-sched.c, blk-mq.c): the elevator from the
// registry, scheduler tags with the elevator's limit_depth, bio_merge and
// insert_requests under the elevator's lock, the completion hooks and the timer. The
// dispatchers are in sched_dispatch.cc.
//
// Locks are taken at the simulator's `now` as the first work of a step, so that the
// qspinlock model sees arrivals in time order; the critical section's effect on the
// elevator happens at arrival (the FIFO order is the arrival order), and the CPU is
// busy until the grant's release.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "engine/model/completion.h"
#include "engine/model/hw_queues.h"
#include "engine/model/measurements.h"
#include "engine/model/sched_path.h"
#include "engine/model/submission.h"
#include "engine/model/tracer.h"

namespace blkbench::engine {
namespace {

constexpr double kInsertListLines = 1;  // dd-insert-lists: a list_add under its own lock

}  // namespace

absl::Status SchedPath::Init(const ElevatorRegistry& elevators) {
  const ElevatorType* type = elevators.Find(q_.config.queue.scheduler);
  if (type == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("scheduler \"", q_.config.queue.scheduler,
                                                   "\" is not modelled by the engine"));
  }
  // The scheduler's own costs on this machine (the profile's schedulers.<name>).
  const SchedulerCosts* costs = q_.profile.CostsOf(type->name);
  const bool global_lock = !type->lock_name.empty();
  if (costs == nullptr || (global_lock && !costs->lock)) {
    return absl::InvalidArgumentError(
        absl::StrCat("machine profile \"", q_.profile.name, "\" (", q_.profile.source, ") has no ",
                     costs == nullptr ? "costs" : "lock_missed_lines", " for scheduler \"",
                     type->name, "\": add schedulers: {", type->name, ": {dispatch_ns: N",
                     global_lock ? ", lock_missed_lines: M" : "", "}}"));
  }
  ElevatorSetup setup{.kernel_major = q_.config.kernel.major,
                      .kernel_minor = q_.config.kernel.minor,
                      .patches = q_.config.kernel.patches,
                      .tunables = q_.config.queue.iosched,
                      .cgroup_weights = q_.config.cgroups.weights};
  elv_ = type->create(setup);
  if (global_lock) {
    elv_lock_ = std::make_unique<Spinlock>(q_.profile, *costs->lock, type->lock_name);
  }
  if (!type->insert_lock_name.empty() && elv_->StagesInserts()) {
    insert_lock_ =
        std::make_unique<Spinlock>(q_.profile, q_.profile.generic_lock, type->insert_lock_name);
  }
  elv_dispatch_cost_ = costs->dispatch;
  if (type->lines) {
    lines_ = *type->lines;
  } else if (global_lock) {
    // An elevator that does not count its sites: the profile's lines for its lock at
    // every site.
    const double m = costs->lock->missed_lines;
    lines_ = {.merge = m,
              .insert_first = m,
              .insert_extra = 0,
              .dispatch_first = m,
              .dispatch_extra = 0,
              .dispatch_empty = m,
              .completion = m};
  }
  batch_dispatch_ = elv_->DispatchBatch();
  elv_lock_on_completion_ = elv_->LockOnCompletion();
  ElevatorQueueLimits limits;
  limits.nr_requests = q_.depth;
  limits.max_sectors = q_.config.queue.max_sectors;
  limits.rotational = q_.device->rotational();
  limits.hw_tags = q_.device->queue_depth() > 1;
  limits.nr_hw_queues = static_cast<uint32_t>(q_.hctxs.size());
  if (absl::Status s = elv_->Init(limits); !s.ok()) return s;
  // depth_updated -> sbitmap_queue_min_shallow_depth() (sizes wake_batch).
  if (const std::optional<uint32_t> min_shallow = elv_->MinShallowDepth()) {
    for (Hctx& h : q_.hctxs) h.tags->SetMinShallowDepth(*min_shallow);
  }
  sched_rqs_.resize(q_.requests.size());
  for (size_t i = 0; i < sched_rqs_.size(); ++i) sched_rqs_[i].id = i;
  elv_scratch_.reserve(2 * kBlkMaxRequestCount);
  elv_freed_.reserve(2 * kBlkMaxRequestCount);
  return absl::OkStatus();
}

// The shallow depth of blk_mq_alloc_data for the task's current bio (the elevator's
// limit_depth), in the units the sbitmap applies: a queue-wide depth (6.10+
// mq-deadline's async_depth) becomes a per-word one (dd_to_word_depth); whole-bitmap
// (6.17+) maps and other elevators apply the value as is.
std::optional<uint32_t> SchedPath::ShallowDepth(const Task& task) const {
  if (!elv_) return std::nullopt;
  std::optional<uint32_t> d = elv_->LimitDepth(task.bio_write, /*sync=*/true);
  if (!d) return d;
  const SbitmapQueue& sbq = *q_.hctxs[task.hctx].tags;
  if (elv_->LimitDepthIsQueueWide() && q_.mechanisms.shallow_mode == ShallowMode::kPerWord) {
    const uint64_t word = uint64_t{1} << sbq.sbitmap().shift();
    d = static_cast<uint32_t>(
        std::max<uint64_t>(1, (uint64_t{*d} * word + q_.depth - 1) / std::max(1u, q_.depth)));
  }
  return std::max(*d, sbq.min_shallow_depth() == ~0u ? 1u : sbq.min_shallow_depth());
}

int SchedPath::GetSchedTag(Task& task, std::optional<uint32_t> shallow) {
  SbitmapQueue& sbq = *q_.hctxs[task.hctx].tags;
  return shallow ? sbq.GetShallow(task.cpu, *shallow) : sbq.Get(task.cpu);
}

// Locks are taken at `now` (or `at` for completions, which run on a CPU that may still
// be busy): arrivals must not go back in time, so a late one is queued at the last.
LockGrant SchedPath::TakeLock(Spinlock& lock, int cpu, SimTime cs_ns, Stage stage,
                              std::optional<double> missed_lines, SimTime at) {
  VirtualCpu& c = q_.cpus[cpu];
  SimTime arrival = std::max({q_.sim.now(), at, c.busy_until()});
  arrival = std::max(arrival, lock_last_arrival_);
  lock_last_arrival_ = arrival;
  const LockGrant g = missed_lines ? lock.Acquire(arrival, cpu, cs_ns, *missed_lines)
                                   : lock.Acquire(arrival, cpu, cs_ns);
  c.Account(Stage::kLockSpin, g.spin_ns);
  c.Account(stage, g.released - g.granted);
  c.OccupyUntil(g.released);
  SiteStats& site = sites_[SlotOf(lock)][static_cast<int>(stage)];
  ++site.acquisitions;
  site.spin_ns += g.spin_ns;
  site.hold_ns += g.released - g.granted;
  return g;
}

// blk_mq_sched_bio_merge() -> dd_bio_merge(): under the elevator lock, try last_merge,
// the back-merge hash and a front merge. The bio then ends with the request it joined.
namespace {
// The job's prioclass (fio prio/prioclass → ioprio_set): IOPRIO_CLASS_NONE and BE are
// the best-effort level, as ioprio_class_to_prio[] folds them.
IoprioClass JobIoprio(const JobOptions& job) {
  switch (job.ioprio_class) {
    case kIoprioClassRt:
      return IoprioClass::kRt;
    case kIoprioClassIdle:
      return IoprioClass::kIdle;
    default:
      return IoprioClass::kBe;
  }
}
}  // namespace

bool SchedPath::BioMerge(Task& task) {
  if (task.bio_sectors_left > q_.config.queue.max_sectors) return false;  // REQ_NOMERGE front
  if (elv_lock_) {
    TakeLock(*elv_lock_, task.cpu, q_.profile.stage.elevator_bio_merge, Stage::kMerge,
             lines_.merge);
  }
  SchedBio sbio;
  sbio.sector = task.bio_sector;
  sbio.sectors = static_cast<uint32_t>(task.bio_sectors_left);
  sbio.write = task.bio_write;
  sbio.sync = true;
  sbio.ioprio = JobIoprio(*task.job);
  sbio.ioc = task.ioc;
  sbio.group = task.group;
  sbio.cpu = static_cast<uint32_t>(task.cpu);
  sbio.hctx = task.hctx;
  const BioMergeResult m = elv_->BioMerge(sbio);
  ElvAfterCall();
  if (m.type == MergeType::kNone) return false;
  const uint32_t index = IndexOf(*m.rq);
  Request& rq = q_.requests[index];
  const uint64_t bio = BlkMq::BioId(task.index, task.bio_io);
  if (m.type == MergeType::kBack) {
    q_.Bio(rq.last_io).next = bio;
    rq.last_io = bio;
  } else {
    q_.Bio(bio).next = rq.io;
    rq.io = bio;
  }
  ++rq.nr_bios;
  rq.sector = m.rq->sector;
  rq.sectors = m.rq->sectors;
  task.has_bio = false;
  task.bio_sectors_left = 0;
  ++q_.counters.elv_bio_merges;
  if (m.freed != nullptr)
    FreeMergedRequest(IndexOf(*m.freed), task.cpu, q_.cpus[task.cpu].busy_until());
  return true;
}

// Moves `src`'s bios onto `dst` (blk_attempt_req_merge: the bios of the request merged
// away end with the survivor).
void SchedPath::AppendBios(uint32_t dst, uint32_t src, bool front) {
  Request& d = q_.requests[dst];
  const Request& s = q_.requests[src];
  if (front) {
    q_.Bio(s.last_io).next = d.io;
    d.io = s.io;
  } else {
    q_.Bio(d.last_io).next = s.io;
    d.last_io = s.last_io;
  }
  d.nr_bios += s.nr_bios;
  const SchedRequest& sr = Srq(dst);
  d.sector = sr.sector;
  d.sectors = sr.sectors;
}

// elv_merge_requests() / an insert merge: `index` was merged away. finish_request, then
// the scheduler tag goes back (waking submitters).
void SchedPath::FreeMergedRequest(uint32_t index, int cpu, SimTime at) {
  SchedRequest& s = Srq(index);
  if (s.merged_into != nullptr) AppendBios(IndexOf(*s.merged_into), index, /*front=*/false);
  elv_->FinishRequest(s);
  ++q_.counters.elv_insert_merges;
  q_.completion->FreeTag(index / q_.depth, static_cast<int>(index % q_.depth), cpu, at);
}

// blk_mq_rq_ctx_init() + blk_mq_sched_prepare(): the request as the elevator sees it.
void SchedPath::PrepareRequest(Task& task, uint32_t index) {
  const Request& rq = q_.requests[index];
  SchedRequest& s = Srq(index);
  s.sector = rq.sector;
  s.sectors = rq.sectors;
  s.write = rq.write;
  s.sync = true;  // O_DIRECT: REQ_SYNC for writes too
  s.ioprio = JobIoprio(*task.job);
  if (task.job->ioprio_class != 0) {
    s.ioprio_level = static_cast<uint8_t>(task.job->ioprio_level);
  }
  s.submit_time_ns = q_.sim.now();
  s.merged_into = nullptr;
  s.ioc = task.ioc;
  s.group = task.group;
  s.cpu = static_cast<uint32_t>(task.cpu);
  s.hctx = task.hctx;
  q_.requests[index].driver_tag = -1;
  q_.requests[index].budget = false;
  elv_->PrepareRequest(s);
}

// blk_mq_dispatch_list() / blk_mq_insert_request(): insert_requests once for the batch
// under one lock hold, then run the hardware queue — synchronously for a plug flush
// from the submitter, async (kblockd) for an unplugged request or a from_schedule flush.
void SchedPath::InsertStep(Task& task) {
  const SimTime per = q_.profile.stage.elevator_insert;
  // bfq_insert_requests(): the lock once per request, each take at the time the previous
  // one ended, so CPUs queued on the lock meanwhile get it in between (one request per
  // step; the task comes back for the next).
  const bool one_per_step = elv_lock_ && lines_.insert_per_request && !elv_->StagesInserts();
  const size_t take = one_per_step ? 1 : task.insert.size();
  const SimTime n = static_cast<SimTime>(take);
  elv_scratch_.clear();
  for (size_t i = 0; i < take; ++i) elv_scratch_.push_back(&Srq(task.insert[i]));
  if (elv_->StagesInserts()) {
    // dd-insert-lists: a list_add per request under the insertion lock; sorting into
    // the elevator happens at dispatch under dd->lock.
    if (insert_lock_) {
      TakeLock(*insert_lock_, task.cpu, q_.profile.coherence.lock_uncontended * n, Stage::kInsert,
               kInsertListLines);
    }
    elv_->StageRequests(elv_scratch_);
  } else {
    if (one_per_step) {
      TakeLock(*elv_lock_, task.cpu, per, Stage::kInsert, lines_.insert_first);
    } else if (elv_lock_ && n > 0) {
      TakeLock(*elv_lock_, task.cpu, per * n, Stage::kInsert,
               lines_.insert_first + lines_.insert_extra * static_cast<double>(n - 1));
    }
    elv_freed_.clear();
    elv_->InsertRequests(elv_scratch_, InsertFlags{}, q_.sim.now(), elv_freed_);
    for (SchedRequest* f : elv_freed_) {
      FreeMergedRequest(IndexOf(*f), task.cpu, q_.cpus[task.cpu].busy_until());
    }
  }
  if (one_per_step && task.insert.size() > 1) {
    task.insert.erase(task.insert.begin());
    ElvAfterCall();
    return;
  }
  task.insert.clear();
  ElvAfterCall();
  if (task.insert_run_sync) {
    if (!task.disp.active()) StartDispatch(task.disp, task.hctx);
  } else {
    q_.hw->ScheduleRun(task.hctx, task.cpu, q_.cpus[task.cpu].busy_until());
  }
}

// blk_mq_end_request() with an elevator: completed_request, then finish_request (the
// lock for bfq), the driver tag, and the scheduler tag (waking submitters).
void SchedPath::Complete(uint32_t index, int cpu, SimTime at) {
  Request& rq = q_.requests[index];
  SchedRequest& s = Srq(index);
  elv_->CompletedRequest(s, at);
  if (elv_lock_on_completion_ && elv_lock_) {
    TakeLock(*elv_lock_, cpu, q_.profile.stage.elevator_insert, Stage::kCompletion,
             lines_.completion, at);
  }
  elv_->FinishRequest(s);
  const uint32_t h = index / q_.depth;
  if (rq.driver_tag >= 0) {
    (void)q_.hctxs[h].driver_tags->Clear(static_cast<unsigned>(rq.driver_tag), cpu);
    rq.driver_tag = -1;
  }
  rq.budget = false;
  ElvAfterCall();
}

// After any call into the elevator: its timer may have moved, and it may have asked for
// hardware-queue runs (bfq_schedule_dispatch, kyber_domain_wake), which go to kblockd.
void SchedPath::ElvAfterCall() {
  const uint64_t deadline = elv_->TimerDeadline();
  if (deadline != elv_timer_at_) {
    if (elv_timer_event_.valid() && q_.sim.IsPending(elv_timer_event_))
      q_.sim.Cancel(elv_timer_event_);
    elv_timer_event_ = EventId{};
    elv_timer_at_ = deadline;
    if (deadline != kNoTimer) {
      elv_timer_event_ =
          q_.sim.Schedule(std::max<SimTime>(deadline, q_.sim.now()), q_.handler, kElvTimer, 0);
    }
  }
  run_requests_.clear();
  elv_->TakeRunRequests(run_requests_);
  for (const uint32_t h : run_requests_) {
    if (h == kAllHwQueues) {
      for (uint32_t i = 0; i < q_.hctxs.size(); ++i)
        q_.hw->ScheduleRun(i, q_.completion->IrqCpu(i), q_.sim.now());
    } else if (h < q_.hctxs.size()) {
      q_.hw->ScheduleRun(h, q_.completion->IrqCpu(h), q_.sim.now());
    }
  }
}

// bfq_idle_slice_timer() (under bfqd->lock) / kyber_timer_fn(): the timer's body, then
// the queue runs it asked for.
void SchedPath::TimerFired() {
  elv_timer_event_ = EventId{};
  elv_timer_at_ = kNoTimer;
  ++q_.counters.elv_timer_fires;
  const int cpu = q_.completion->IrqCpu(0);
  if (elv_lock_) TakeLock(*elv_lock_, cpu, q_.profile.coherence.lock_uncontended, Stage::kOther);
  elv_->TimerExpired(q_.sim.now());
  ElvAfterCall();
}

void SchedPath::ResetLockBases() {
  if (elv_lock_) elv_lock_base_ = elv_lock_->stats();
  if (insert_lock_) insert_lock_base_ = insert_lock_->stats();
  site_bases_ = sites_;
}

SchedPath::SiteStats SchedPath::SiteStatsSinceRamp(const Spinlock& lock, Stage site) const {
  const int slot = SlotOf(lock);
  const SiteStats& now = sites_[slot][static_cast<int>(site)];
  const SiteStats& base = site_bases_[slot][static_cast<int>(site)];
  return SiteStats{.acquisitions = now.acquisitions - base.acquisitions,
                   .spin_ns = now.spin_ns - base.spin_ns,
                   .hold_ns = now.hold_ns - base.hold_ns};
}

LockStats SchedPath::LockStatsSinceRamp(const Spinlock& lock) const {
  const LockStats& base = &lock == insert_lock_.get() ? insert_lock_base_ : elv_lock_base_;
  LockStats d = lock.stats();
  d.acquisitions -= base.acquisitions;
  d.contended -= base.contended;
  d.failed_try -= base.failed_try;
  d.spin_ns -= base.spin_ns;
  d.hold_ns -= base.hold_ns;
  d.busy_ns -= base.busy_ns;
  d.multiplier_sum -= base.multiplier_sum;
  return d;
}

}  // namespace blkbench::engine
