// Bfq: device idling (I/O-dispatch plugging) and injection — bfq_better_to_idle() and its
// two halves, the idle slice timer, think time / seekiness / I/O-boundness, the inject
// limit, and bfq_completed_request().
#include <algorithm>

#include "engine/sched/bfq/bfq.h"
#include "engine/sched/bfq/bfq_queue.h"

namespace blkbench::engine {
namespace {

constexpr uint64_t kSeekThr = 8 * 100;       // BFQQ_SEEK_THR, sectors
constexpr uint32_t kSectThrNonrot = 2 * 32;  // BFQQ_SECT_THR_NONROT, sectors
constexpr uint64_t kTtimeValidSamples = 80;  // bfq_sample_valid()

}  // namespace

// bfq_asymmetric_scenario(): queues with different weights or classes, or too many
// groups with pending requests (the per-profile threshold: > 0 before 6.2, > 1 after).
bool Bfq::AsymmetricScenario(const Queue* q) const {
  const bool smallest_weight = q != nullptr && q->pending && !weight_counts_.empty() &&
                               weight_counts_.begin()->first == q->entity.weight;
  const bool varied_queue_weights = !smallest_weight && weight_counts_.size() >= 2;
  const auto& b = busy_per_class_;
  const bool multiple_classes_busy = (b[0] && b[1]) || (b[0] && b[2]) || (b[1] && b[2]);
  const uint32_t threshold =
      profile_.one_group_no_idle ? 1 : profile_.groups_with_pending_threshold;
  return varied_queue_weights || multiple_classes_busy || groups_with_pending_reqs() > threshold;
}

// idling_boosts_thr_without_issues(): rotational without queueing, or a sequential,
// I/O-bound, short-think-time queue on a device that is rotational or cannot queue.
bool Bfq::IdlingBoostsThr(const Queue& q) const {
  const bool rot_without_queueing = limits_.rotational && !limits_.hw_tags;
  const bool seq_io_bound = !q.Seeky() && q.io_bound && q.has_short_ttime;
  return rot_without_queueing || ((limits_.rotational || !limits_.hw_tags) && seq_io_bound);
}

// idling_needed_for_service_guarantees(): an asymmetric scenario, or the only busy queue.
bool Bfq::IdlingNeededForGuarantees(const Queue& q) const {
  return AsymmetricScenario(&q) || BusyTotal() == 1;
}

// bfq_better_to_idle(): never for async or idle-class queues.
bool Bfq::BetterToIdle(const Queue& q) const {
  if (tunables_.slice_idle_ns == 0 || !q.sync || q.IdleClass()) return false;
  return IdlingBoostsThr(q) || IdlingNeededForGuarantees(q);
}

bool Bfq::MustIdle(const Queue& q) const { return q.Empty() && BetterToIdle(q); }

bool Bfq::BudgetTimeout(const Queue& q, uint64_t now_ns) const {  // bfq_bfqq_budget_timeout()
  return now_ns >= q.budget_timeout_ns;
}

// bfq_may_expire_for_budg_timeout(): not while idling with most of the budget used.
bool Bfq::MayExpireForBudgetTimeout(const Queue& q, uint64_t now_ns) const {
  return (!q.wait_request || q.BudgetLeft() >= q.entity.budget / 3) && BudgetTimeout(q, now_ns);
}

// bfq_choose_bfqq_for_injection(): while plugged, another active queue's next request
// may go to the drive as long as fewer than inject_limit requests are in flight. The
// kernel walks bfqd->active_list from its head (most recently activated first); so does
// this scan. The kernel's temporary raise of a zero limit "after a slice_idle of
// plugging" compares jiffies with a nanosecond quantity and practically never fires:
// it is left out.
Bfq::Queue* Bfq::InjectionCandidate(uint64_t /*now_ns*/) const {
  const Queue& in_serv = *in_service_;
  if (tot_rq_in_driver_ >= in_serv.inject_limit) return nullptr;
  Queue* best = nullptr;
  for (const auto& qp : queues_) {
    Queue& c = *qp;
    if (c.entity.tree != bfq::Entity::Tree::kActive || c.Empty()) continue;
    if (ServToCharge(*c.next_rq, c) > c.BudgetLeft()) continue;
    // Only one large request in flight on non-rotational drives.
    if (!limits_.rotational && c.next_rq->sectors >= kSectThrNonrot && tot_rq_in_driver_ >= 1) {
      continue;
    }
    if (best == nullptr || c.entity.tree_seq > best->entity.tree_seq) best = &c;
  }
  return best;
}

// bfq_arm_slice_timer(): seeky queues in a symmetric scenario get only BFQ_MIN_TT.
void Bfq::ArmSliceTimer(uint64_t now_ns) {
  Queue& q = *in_service_;
  q.wait_request = true;
  uint64_t sl = tunables_.slice_idle_ns;
  if (q.Seeky() && !AsymmetricScenario(&q)) sl = std::min(sl, kBfqMinTtNs);
  last_idling_start_ns_ = now_ns;
  idle_timer_ns_ = now_ns + sl;
  ++stats_.idle_timer_armed;
}

// bfq_idle_slice_timer_body(): the queue did not get a request in time.
void Bfq::TimerExpired(uint64_t now_ns) {
  last_now_ns_ = now_ns;
  idle_timer_ns_ = kNoTimer;
  ++stats_.idle_timer_fired;
  Queue* q = in_service_;
  if (q == nullptr) return;
  q->wait_request = false;
  if (BudgetTimeout(*q, now_ns)) {
    Expire(*q, true, BfqExpireReason::kBudgetTimeout, now_ns);
  } else if (q->queued[0] == 0 && q->queued[1] == 0) {
    Expire(*q, true, BfqExpireReason::kTooIdle, now_ns);
  }
  run_requested_ = true;  // bfq_schedule_dispatch()
}

void Bfq::TakeRunRequests(std::vector<uint32_t>& hctxs) {
  if (!run_requested_) return;
  run_requested_ = false;
  hctxs.push_back(kAllHwQueues);
}

// bfq_reset_inject_limit(): start at 0 for short-think-time queues (an injected request
// could outlast their think time), at 1 for the others; re-measure the baseline.
void Bfq::ResetInjectLimit(Queue& q, uint64_t now_ns) {
  q.last_serv_time_ns = 0;
  waited_rq_ = nullptr;
  q.inject_limit = q.has_short_ttime ? 0 : 1;
  q.decrease_time_ns = now_ns;
}

// bfq_update_inject_limit(): on completion of the sampled "first request" of the
// in-service queue, compare its total service time with the no-injection baseline:
// within 1.5x, allow one more injected request; beyond, one fewer.
void Bfq::UpdateInjectLimit(Queue& q, uint64_t now_ns) {
  const uint64_t tot_time_ns = now_ns - last_empty_occupied_ns_;
  const uint32_t old_limit = q.inject_limit;
  if (q.last_serv_time_ns > 0 && rqs_injected_) {
    const uint64_t threshold = (q.last_serv_time_ns * 3) >> 1;
    if (tot_time_ns >= threshold && old_limit > 0) {
      --q.inject_limit;
      q.decrease_time_ns = now_ns;
    } else if (tot_time_ns < threshold && old_limit <= max_rq_in_driver_) {
      ++q.inject_limit;
    }
  }
  // tot_rq_in_driver_ == 1: only this request was in the drive (it is counted until
  // CompletedBody runs).
  if ((q.last_serv_time_ns == 0 && tot_rq_in_driver_ == 1) || tot_time_ns < q.last_serv_time_ns) {
    if (q.last_serv_time_ns == 0) q.inject_limit = std::max(1u, old_limit);
    q.last_serv_time_ns = tot_time_ns;
  } else if (!rqs_injected_ && tot_rq_in_driver_ == 1) {
    q.last_serv_time_ns = tot_time_ns;
  }
  waited_rq_ = nullptr;
  rqs_injected_ = false;
}

// bfq_update_io_thinktime(): EWMA (7/8) of the gap between the queue going empty with
// nothing in flight and its next request, capped at 2 * slice_idle.
void Bfq::UpdateThinkTime(Queue& q, uint64_t now_ns) {
  if (q.dispatched != 0 || q.busy) return;
  const uint64_t gap = now_ns > q.last_end_request_ns ? now_ns - q.last_end_request_ns : 0;
  const uint64_t elapsed = std::min(gap, 2 * tunables_.slice_idle_ns);
  q.ttime_samples = (7 * q.ttime_samples + 256) / 8;
  q.ttime_total = (7 * q.ttime_total + 256 * elapsed) / 8;
  q.ttime_mean = (q.ttime_total + 128) / q.ttime_samples;
}

// bfq_update_has_short_ttime(): short unless the mean think time exceeds slice_idle / 2.
void Bfq::UpdateHasShortTtime(Queue& q, uint64_t now_ns) {
  if (!q.sync || q.IdleClass() || tunables_.slice_idle_ns == 0) return;
  const bool has_short =
      !(q.ttime_samples > kTtimeValidSamples && q.ttime_mean > tunables_.slice_idle_ns / 2);
  const bool changed = has_short != q.has_short_ttime;
  q.has_short_ttime = has_short;
  if (changed && q.last_serv_time_ns == 0 &&
      (now_ns >= q.decrease_time_ns + 100 * kNsPerMs || !has_short)) {
    ResetInjectLimit(q, now_ns);
  }
}

// bfq_update_io_seektime(): a request is seeky if it starts more than 800 sectors from
// where the queue's previous request ended (on SSDs only small requests count).
void Bfq::UpdateSeekTime(Queue& q, const SchedRequest& rq) {
  const uint64_t last = q.last_request_pos;
  const uint64_t dist = last == 0 ? 0 : (rq.sector > last ? rq.sector - last : last - rq.sector);
  const bool seeky = dist > kSeekThr && (limits_.rotational || rq.sectors < kSectThrNonrot);
  q.seek_history = (q.seek_history << 1) | (seeky ? 1u : 0u);
}

// bfq_update_io_intensity(): I/O-bound if busy at least ~80% of a 200 ms window.
void Bfq::UpdateIoIntensity(Queue& q, uint64_t now_ns) {
  const uint64_t tot_io_time = now_ns - q.io_start_time_ns;
  if (q.Empty() && q.dispatched == 0 && now_ns > q.last_end_request_ns) {
    q.tot_idle_time_ns += now_ns - q.last_end_request_ns;
  }
  if (q.just_created) return;
  q.io_bound = q.tot_idle_time_ns * 5 <= tot_io_time;
  if (tot_io_time > 200 * kNsPerMs) {
    q.io_start_time_ns = now_ns - tot_io_time / 2;
    q.tot_idle_time_ns /= 2;
  }
}

// bfq_rq_enqueued(): a request for the queue being idled for stops the timer, unless it
// is small and idling is for throughput (wait for it to grow by merging).
void Bfq::RqEnqueued(Queue& q, const SchedRequest& rq, uint64_t now_ns) {
  q.last_request_pos = rq.End();
  if (&q != in_service_ || !q.wait_request) return;
  const bool small_req = q.queued[(!rq.write || rq.sync) ? 1 : 0] == 1 && rq.sectors < 32;
  const bool budget_timeout = BudgetTimeout(q, now_ns);
  if (small_req && IdlingBoostsThr(q) && !budget_timeout) return;
  q.wait_request = false;
  idle_timer_ns_ = kNoTimer;
  if (budget_timeout) Expire(q, false, BfqExpireReason::kBudgetTimeout, now_ns);
}

// bfq_completed_request(): the in-service queue either idles (timer armed once nothing
// of it is in flight), expires, or stays; with the drive empty, kick a queue run.
void Bfq::CompletedBody(Queue& q, uint64_t now_ns) {
  max_rq_in_driver_ = std::max(max_rq_in_driver_, tot_rq_in_driver_);  // bfq_update_hw_tag()
  --tot_rq_in_driver_;
  --q.dispatched;
  if (q.dispatched == 0 && !q.busy) {
    q.budget_timeout_ns = now_ns;
    MarkPending(q, false);
  }
  q.last_end_request_ns = now_ns;
  if (in_service_ == &q) {
    if (MustIdle(q)) {
      if (q.dispatched == 0) ArmSliceTimer(now_ns);
      return;
    }
    if (MayExpireForBudgetTimeout(q, now_ns)) {
      Expire(q, false, BfqExpireReason::kBudgetTimeout, now_ns);
    } else if (q.Empty() && (q.dispatched == 0 || !BetterToIdle(q))) {
      Expire(q, false, BfqExpireReason::kNoMoreRequests, now_ns);
    }
  }
  if (tot_rq_in_driver_ == 0) run_requested_ = true;  // bfq_schedule_dispatch()
}

void Bfq::CompletedRequest(SchedRequest& rq, uint64_t now_ns) {
  last_now_ns_ = now_ns;
  if (!Priv(rq).started) return;
  Priv(rq).started = false;
  Queue& q = *QueueOf(rq);
  if (&rq == waited_rq_) UpdateInjectLimit(q, now_ns);
  CompletedBody(q, now_ns);
}

}  // namespace blkbench::engine
