// Bfq: budgets and expiration — activation of a queue that becomes busy, preemption,
// bfq_bfqq_expire() with its slow-queue time charging and budget feedback.
#include <algorithm>

#include "engine/sched/bfq/bfq.h"
#include "engine/sched/bfq/bfq_queue.h"

namespace blkbench::engine {

// bfq_bfqq_update_budg_for_activation(): a queue that expired while waiting for its
// next request (non_blocking_wait_rq) and got it soon enough keeps the rest of its
// budget and back-shifted timestamps, to recover its service hole; it then asks to
// preempt the in-service queue.
bool Bfq::UpdateBudgetForActivation(Queue& q, bool arrived_in_time) {
  if (q.non_blocking_wait_rq && arrived_in_time && q.BudgetLeft() > 0) {
    q.entity.budget = std::min(q.BudgetLeft(), q.max_budget);
    q.entity.service = 0;
    return true;
  }
  q.entity.service = 0;
  q.entity.budget = std::max(q.max_budget, ServToCharge(*q.next_rq, q));
  q.non_blocking_wait_rq = false;
  return false;
}

// bfq_bfqq_higher_class_or_weight(): compared at the level where the two meet.
bool Bfq::HigherClassOrWeight(const Queue& q, const Queue& in_serv) const {
  if (q.entity.class_idx < in_serv.entity.class_idx) return true;
  uint32_t w = q.entity.weight;
  uint32_t in_w = in_serv.entity.weight;
  if (q.entity.parent != in_serv.entity.parent) {
    if (q.entity.parent != nullptr) w = q.entity.parent->weight;
    if (in_serv.entity.parent != nullptr) in_w = in_serv.entity.parent->weight;
  }
  return w > in_w;
}

// bfq_bfqq_handle_idle_busy_switch() without weight raising: activate the queue, then
// expire the in-service queue if the newcomer may preempt it (hole recovery, higher
// class or weight) or if plugging for it is no longer worth it. next_queue_may_preempt()
// is approximated by "another entity is active at the root level".
void Bfq::HandleIdleBusySwitch(Queue& q, uint64_t now_ns) {
  const bool arrived_in_time = now_ns <= q.last_end_request_ns + tunables_.slice_idle_ns * 3;
  const bool wants_to_preempt = UpdateBudgetForActivation(q, arrived_in_time);
  q.just_created = false;
  AddBusy(q);
  if (in_service_ == nullptr || in_service_ == &q) return;
  const bool next_may_preempt = groups_[0]->sd.HasActive();
  if ((wants_to_preempt || HigherClassOrWeight(q, *in_service_) || !BetterToIdle(*in_service_)) &&
      next_may_preempt) {
    Expire(*in_service_, false, BfqExpireReason::kPreempted, now_ns);
  }
}

// __bfq_bfqq_recalc_budget(): feedback on the next budget from how this one ended.
void Bfq::RecalcBudget(Queue& q, BfqExpireReason reason) {
  const int64_t max_budget = tunables_.max_budget;
  const int64_t min_budget = max_budget / 32;  // bfq_min_budget()
  int64_t budget = q.max_budget;
  if (q.sync) {
    switch (reason) {
      case BfqExpireReason::kTooIdle:
        if (q.dispatched > 0) {
          budget = std::min(budget * 2, max_budget);  // still waiting on its own I/O
        } else {
          budget = budget > 5 * min_budget ? budget - 4 * min_budget : min_budget;
        }
        break;
      case BfqExpireReason::kBudgetTimeout:
        budget = std::min(budget * 2, max_budget);
        break;
      case BfqExpireReason::kBudgetExhausted:
        budget = std::min(budget * 4, max_budget);
        break;
      case BfqExpireReason::kNoMoreRequests:
        budget = std::max(q.entity.service, min_budget);
        break;
      case BfqExpireReason::kPreempted:
        return;
    }
  } else {
    budget = max_budget;  // async queues always get the maximum
  }
  q.max_budget = budget;
  if (q.next_rq != nullptr) q.entity.budget = std::max(q.max_budget, ServToCharge(*q.next_rq, q));
}

// bfq_bfqq_expire() + __bfq_bfqq_expire().
void Bfq::Expire(Queue& q, bool compensate, BfqExpireReason reason, uint64_t now_ns) {
  uint64_t delta_ms = 0;
  const bool slow = IsSlow(q, compensate, now_ns, &delta_ms);
  // Slow (typically seeky) queues and queues timed out with a third of their budget
  // left are charged the time they held the device, not the sectors they moved.
  if (slow ||
      (reason == BfqExpireReason::kBudgetTimeout && q.BudgetLeft() >= q.entity.budget / 3)) {
    ChargeTime(q, delta_ms);
  }
  rqs_injected_ = wait_dispatch_ = false;
  waited_rq_ = nullptr;
  RecalcBudget(q, reason);

  // An empty queue leaves the busy set, unless it is being preempted and needs its
  // guarantees: then it is requeued empty, to be served before later entities.
  if (q.Empty() && !(reason == BfqExpireReason::kPreempted && IdlingNeededForGuarantees(q))) {
    if (q.dispatched == 0) q.budget_timeout_ns = now_ns;
    DelBusy(q, true);
  } else {
    ActivateRequeueQueue(q, q.non_blocking_wait_rq, true);
  }
  ResetInService();
  ++stats_.expirations[static_cast<int>(reason)];

  // A queue that expired waiting for I/O may resume this budget if its next request
  // arrives in time (bfq_bfqq_update_budg_for_activation()); otherwise start afresh.
  if (!q.busy && reason != BfqExpireReason::kBudgetTimeout &&
      reason != BfqExpireReason::kBudgetExhausted) {
    q.non_blocking_wait_rq = true;
  } else {
    q.entity.service = 0;
  }
  for (bfq::Entity* e = q.entity.parent; e != nullptr; e = e->parent) e->service = 0;
}

// bfq_bfqq_is_slow(): seeky, or (over a long enough slot) below half the peak rate,
// measured as sectors served against max_budget (no peak-rate estimator here).
bool Bfq::IsSlow(const Queue& q, bool compensate, uint64_t now_ns, uint64_t* delta_ms) const {
  if (!q.sync) return false;
  bool slow = q.Seeky();
  const uint64_t end = compensate ? last_idling_start_ns_ : now_ns;
  const uint64_t delta_us = end > last_budget_start_ns_ ? (end - last_budget_start_ns_) / 1000 : 0;
  if (delta_us < 1000) {
    *delta_ms = (limits_.rotational ? tunables_.slice_idle_ns : kBfqMinTtNs) / kNsPerMs;
    return slow;
  }
  *delta_ms = delta_us / 1000;
  if (delta_us > 20000) slow = q.entity.service < tunables_.max_budget / 2;
  return slow;
}

// bfq_bfqq_charge_time(): charge the service a fast queue would have received in the
// time this one held the device (bounded by the budget timeout).
void Bfq::ChargeTime(Queue& q, uint64_t time_ms) {
  const uint64_t timeout_ms = tunables_.timeout_ns / kNsPerMs;
  const uint64_t bounded_ms = std::min(time_ms, timeout_ms);
  const auto for_time =
      static_cast<int64_t>(static_cast<uint64_t>(tunables_.max_budget) * bounded_ms / timeout_ms);
  const int64_t total = std::max(for_time, q.entity.service);
  if (total > q.entity.budget) q.entity.budget = total;
  bfq::Served(q.entity, std::max<int64_t>(0, total - q.entity.service));
}

// bfq_add_bfqq_in_groups_with_pending_reqs() / bfq_weights_tree_add() and their
// removals: a queue counts while it is busy or has requests in the driver.
void Bfq::MarkPending(Queue& q, bool pending) {
  if (q.pending == pending) return;
  q.pending = pending;
  Group& g = *groups_[q.group];
  if (pending) {
    ++weight_counts_[q.entity.weight];
    if (g.pending_queues++ == 0 && !g.IsRoot()) ++groups_with_pending_;
  } else {
    auto it = weight_counts_.find(q.entity.weight);
    if (--it->second == 0) weight_counts_.erase(it);
    if (--g.pending_queues == 0 && !g.IsRoot()) --groups_with_pending_;
  }
}

uint32_t Bfq::groups_with_pending_reqs() const {
  if (!profile_.OneGroupRule()) return groups_with_pending_;
  return groups_with_pending_ + (groups_[0]->pending_queues > 0 ? 1 : 0);
}

}  // namespace blkbench::engine
