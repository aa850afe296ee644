// Bfq: queues, groups, insertion, selection, dispatch and expiration — the unlocked
// bodies of block/bfq-iosched.c's elevator_mq_ops (the caller charges bfqd->lock).
#include "engine/sched/bfq/bfq.h"

#include <algorithm>
#include <cassert>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "engine/sched/bfq/bfq_queue.h"

namespace blkbench::engine {
namespace {

bool IsSync(const SchedRequest& rq) { return !rq.write || rq.sync; }  // rq_is_sync()

}  // namespace

BfqProfile BfqProfile::ForKernel(int major, int minor) {
  const int v = major * 100 + minor;
  BfqProfile p;
  p.groups_with_pending_threshold = v >= 602 ? 1 : 0;
  p.injection = v >= 502;
  p.stable_merge = v >= 513;
  return p;
}

Bfq::Bfq(BfqProfile profile, BfqTunables tunables)
    : profile_(profile), tunables_(std::move(tunables)) {}

Bfq::~Bfq() = default;

// bfq_init_queue() + bfq_depth_updated().
absl::Status Bfq::Init(const ElevatorQueueLimits& limits) {
  if (limits.nr_requests == 0) return absl::InvalidArgumentError("nr_requests must be > 0");
  if (tunables_.max_budget < 32) return absl::InvalidArgumentError("max_budget must be >= 32");
  if (tunables_.timeout_ns < kNsPerMs) return absl::InvalidArgumentError("timeout must be >= 1ms");
  for (size_t g = 1; g < tunables_.group_weights.size(); ++g) {
    const uint32_t w = tunables_.group_weights[g];
    if (w < 1 || w > 1000) {
      return absl::InvalidArgumentError(
          absl::StrCat("group ", g, " weight ", w, " not in 1..1000"));
    }
  }
  limits_ = limits;
  rq_data_.Reserve(size_t{limits.nr_requests} * std::max<uint32_t>(1, limits.nr_hw_queues));
  // sbitmap_calculate_shift(): words of 1 << shift bits, at least 4 words when possible.
  uint32_t shift = 6;
  if (limits.nr_requests >= 4) {
    while ((4u << shift) > limits.nr_requests) --shift;
  }
  word_depth_ = 1u << shift;
  groups_.clear();
  queues_.clear();
  queue_index_.clear();
  GroupAt(0);
  return absl::OkStatus();
}

// bfq_exit_queue(): nothing queued or in flight, and the counters balance.
absl::Status Bfq::Exit() {
  if (tot_rq_in_driver_ != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("bfq torn down with ", tot_rq_in_driver_, " requests in the driver"));
  }
  return counters_.CheckBalanced(queued_ + dispatch_.size());
}

// bfq_limit_depth() / bfq_update_depths() with no weight-raised queue: async I/O gets
// half of each sbitmap word, sync writes three quarters, sync reads everything.
std::optional<uint32_t> Bfq::LimitDepth(bool write, bool sync) const {
  if (sync && !write) return std::nullopt;
  return sync ? std::max(word_depth_ * 3 / 4, 1u) : std::max(word_depth_ / 2, 1u);
}

// ---- groups and queues (bfq_create_group_hierarchy, bfq_get_queue, bfq_init_bfqq) ----

Bfq::Group& Bfq::GroupAt(uint32_t index) {
  while (groups_.size() <= index) {
    auto g = std::make_unique<Group>();
    g->index = static_cast<uint32_t>(groups_.size());
    for (bfq::ServiceTree& st : g->sd.st) st.clock = &tree_clock_;
    if (!g->IsRoot()) {
      const auto& w = tunables_.group_weights;
      g->entity.weight = g->index < w.size() ? w[g->index] : kBfqDefaultGroupWeight;
      g->entity.class_idx = static_cast<uint8_t>(IoprioClass::kBe);
      g->entity.sched_data = &groups_[0]->sd;
      g->entity.my_sched_data = &g->sd;
      g->entity.id = g->index;
      g->sd.owner = &g->entity;
    }
    groups_.push_back(std::move(g));
  }
  if (stats_.group_sectors.size() < groups_.size()) stats_.group_sectors.resize(groups_.size());
  return *groups_[index];
}

// bfq_get_queue(): a sync queue per (io context, group); async queues are shared per
// (group, class, level). Then bfq_init_bfqq() and bfq_init_entity().
Bfq::Queue& Bfq::QueueFor(const SchedRequest& rq, uint64_t now_ns) {
  const bool sync = IsSync(rq);
  const auto cls = static_cast<uint32_t>(rq.ioprio);
  const uint32_t level =
      rq.ioprio == IoprioClass::kIdle ? 7 : std::min<uint32_t>(rq.ioprio_level, 7);
  const auto key = std::tuple{rq.group, sync ? 1u : 0u, sync ? rq.ioc : cls * 8 + level};
  if (auto it = queue_index_.find(key); it != queue_index_.end()) return *queues_[it->second];

  Group& g = GroupAt(rq.group);
  if (sync) {
    if (Queue* into = StableMergeTarget(g, rq.ioprio, level, now_ns)) {
      // bfq_do_early_stable_merge(): the new queue is merged at once and for good; this
      // io context's requests go to `into` from now on.
      ++counters_.queues_merged;
      queue_index_.emplace(key, into->index);
      return *into;
    }
  }
  auto q = std::make_unique<Queue>();
  q->index = static_cast<uint32_t>(queues_.size());
  q->ioc = rq.ioc;
  q->group = rq.group;
  q->sync = sync;
  q->ioprio_class = rq.ioprio;
  q->ioprio_level = level;
  q->creation_ns = now_ns;
  q->entity.weight = (8 - level) * kBfqWeightCoeff;  // bfq_ioprio_to_weight()
  q->entity.class_idx = static_cast<uint8_t>(cls);
  q->entity.sched_data = &g.sd;
  q->entity.parent = g.IsRoot() ? nullptr : &g.entity;
  q->entity.id = q->index;
  q->max_budget = 2 * tunables_.max_budget / 3;
  q->has_short_ttime = sync && !q->IdleClass();
  q->last_end_request_ns = now_ns;
  q->io_start_time_ns = now_ns;
  q->decrease_time_ns = now_ns;
  queue_index_.emplace(key, q->index);
  ++counters_.queues_created;
  if (sync && profile_.stable_merge && g.last_created == 0) g.last_created = q->index + 1;
  queues_.push_back(std::move(q));
  return *queues_.back();
}

// bfq_do_or_sched_stable_merge() for a sync queue about to be created at `now_ns` in `g`:
// the queue to merge it into, or nullptr (the new queue may become the group's
// last_bfqq_created). Queues of one fio's numjobs clones, which start together, end up in
// one; separate fio invocations started further apart keep their own.
Bfq::Queue* Bfq::StableMergeTarget(Group& g, IoprioClass cls, uint32_t level, uint64_t now_ns) {
  if (!profile_.stable_merge) return nullptr;
  Queue* last = g.last_created == 0 ? nullptr : queues_[g.last_created - 1].get();
  const bool stale = last == nullptr ||
                     last->creation_ns + kBfqActivationStableMergingNs < now_ns ||
                     last->ioprio_class != cls || last->ioprio_level != level;
  if (stale) {
    g.last_created = 0;  // the queue about to be created takes its place
    return nullptr;
  }
  if (now_ns > last->creation_ns + kBfqBurstIntervalNs) return nullptr;
  // bfqd->nonrot_with_queueing; otherwise a tentative merge (not modelled).
  if (limits_.rotational || !limits_.hw_tags) return nullptr;
  return last;
}

Bfq::Queue* Bfq::QueueOf(const SchedRequest& rq) const {
  return Priv(rq).queue == 0 ? nullptr : queues_[Priv(rq).queue - 1].get();
}

uint32_t Bfq::BusyTotal() const {
  return std::accumulate(busy_per_class_.begin(), busy_per_class_.end(), 0u);
}

uint32_t Bfq::busy_queues() const { return BusyTotal(); }

std::optional<uint32_t> Bfq::in_service_ioc() const {
  if (in_service_ == nullptr) return std::nullopt;
  return in_service_->ioc;
}

// ---- insertion (bfq_insert_requests, __bfq_insert_request, bfq_add_request) ----

void Bfq::InsertRequests(std::span<SchedRequest* const> rqs, InsertFlags flags, uint64_t now_ns,
                         std::vector<SchedRequest*>& freed) {
  last_now_ns_ = now_ns;
  for (SchedRequest* rq : rqs) InsertRequest(*rq, flags, now_ns, freed);
}

void Bfq::InsertRequest(SchedRequest& rq, InsertFlags flags, uint64_t now_ns,
                        std::vector<SchedRequest*>& freed) {
  assert(!Priv(rq).queued);
  if (!Priv(rq).counted) {
    Priv(rq).counted = true;
    ++counters_.inserted;
  } else {
    ++counters_.reinserted;
  }
  if (Priv(rq).queue == 0) {  // bfq_init_rq(): attach to its queue, count it on the bic
    Priv(rq).queue = QueueFor(rq, now_ns).index + 1;
    ++ioc_requests_[rq.ioc];
  }
  Queue& q = *QueueOf(rq);
  Priv(rq).seq = next_seq_++;
  if (flags.at_head) {  // list_add(&rq->queuelist, &bfqd->dispatch)
    dispatch_.push_front(&rq);
    Priv(rq).queued = true;
    Priv(rq).on_dispatch_list = true;
    return;
  }
  if (TryInsertMerge(q, rq, freed)) return;  // blk_mq_sched_try_insert_merge()

  UpdateThinkTime(q, now_ns);
  UpdateHasShortTtime(q, now_ns);
  UpdateSeekTime(q, rq);
  AddRequest(q, rq, now_ns);
  rq.fifo_time_ns =
      now_ns + (IsSync(rq) ? tunables_.fifo_expire_sync_ns : tunables_.fifo_expire_async_ns);
  Priv(rq).fifo_seq = Priv(rq).seq;
  q.fifo.emplace(Key{rq.fifo_time_ns, Priv(rq).fifo_seq}, &rq);
  RqEnqueued(q, rq, now_ns);
}

void Bfq::AddRequest(Queue& q, SchedRequest& rq, uint64_t now_ns) {
  ++q.queued[IsSync(rq) ? 1 : 0];
  ++queued_;
  if (q.sync && ioc_requests_[rq.ioc] <= 1) {
    // Periodically reset the inject limit so that it can drop when the workload changes.
    if (now_ns >= q.decrease_time_ns + 1000 * kNsPerMs) ResetInjectLimit(q, now_ns);
    // Start sampling this request's total service time if it is a "first request" of
    // the in-service queue arriving with nothing (or only injected I/O) in the drive.
    if (&q == in_service_ &&
        (tot_rq_in_driver_ == 0 ||
         (q.last_serv_time_ns > 0 && rqs_injected_ && tot_rq_in_driver_ > 0)) &&
        now_ns >= q.decrease_time_ns + 10 * kNsPerMs) {
      last_empty_occupied_ns_ = now_ns;
      wait_dispatch_ = true;
      if (tot_rq_in_driver_ == 0) rqs_injected_ = false;
    }
  }
  if (q.sync) UpdateIoIntensity(q, now_ns);
  Priv(rq).sort_sector = rq.sector;
  q.sort_list.emplace(Key{rq.sector, Priv(rq).seq}, &rq);
  Priv(rq).queued = true;

  SchedRequest* prev = q.next_rq;
  q.next_rq = ChooseReq(q.next_rq, &rq, last_position_);
  if (!q.busy) {
    HandleIdleBusySwitch(q, now_ns);
  } else if (prev != q.next_rq) {
    UpdatedNextReq(q);
  }
}

// bfq_choose_req(): of two requests, the one to serve first after `last`: sync before
// async, then the shorter seek, where a short backward seek costs back_seek_penalty.
SchedRequest* Bfq::ChooseReq(SchedRequest* rq1, SchedRequest* rq2, uint64_t last) const {
  if (rq1 == nullptr || rq1 == rq2) return rq2;
  if (rq2 == nullptr) return rq1;
  if (IsSync(*rq1) != IsSync(*rq2)) return IsSync(*rq1) ? rq1 : rq2;
  const uint64_t s1 = rq1->sector;
  const uint64_t s2 = rq2->sector;
  const uint64_t back_max = tunables_.back_seek_max_kib * 2;
  bool wrap1 = false;
  bool wrap2 = false;
  uint64_t d1 = 0;
  uint64_t d2 = 0;
  if (s1 >= last) {
    d1 = s1 - last;
  } else if (s1 + back_max >= last) {
    d1 = (last - s1) * tunables_.back_seek_penalty;
  } else {
    wrap1 = true;
  }
  if (s2 >= last) {
    d2 = s2 - last;
  } else if (s2 + back_max >= last) {
    d2 = (last - s2) * tunables_.back_seek_penalty;
  } else {
    wrap2 = true;
  }
  if (!wrap1 && !wrap2) {
    if (d1 != d2) return d1 < d2 ? rq1 : rq2;
    return s1 >= s2 ? rq1 : rq2;
  }
  if (wrap1 != wrap2) return wrap2 ? rq1 : rq2;
  return s1 <= s2 ? rq1 : rq2;  // both wrapped: the one further behind the head
}

// bfq_find_next_rq(): an expired FIFO head (checked once per service slot), else the
// better of the neighbours of `last` in sector order.
SchedRequest* Bfq::FindNextRq(Queue& q, SchedRequest& last, uint64_t now_ns) {
  if (!q.fifo_expire) {  // bfq_check_fifo()
    q.fifo_expire = true;
    SchedRequest* head = q.fifo.begin()->second;
    if (head != &last && now_ns >= head->fifo_time_ns) return head;
  }
  auto it = q.sort_list.find(Key{Priv(last).sort_sector, Priv(last).seq});
  assert(it != q.sort_list.end());
  SchedRequest* prev = it == q.sort_list.begin() ? nullptr : std::prev(it)->second;
  SchedRequest* next = nullptr;
  if (std::next(it) != q.sort_list.end()) {
    next = std::next(it)->second;
  } else if (q.sort_list.begin() != it) {
    next = q.sort_list.begin()->second;
  }
  return ChooseReq(next, prev, last.sector);
}

// bfq_updated_next_req(): an idle-waiting queue's budget must fit its new head.
void Bfq::UpdatedNextReq(Queue& q) {
  if (q.next_rq == nullptr || &q == in_service_) return;
  const int64_t new_budget =
      std::max({q.max_budget, ServToCharge(*q.next_rq, q), q.entity.service});
  if (q.entity.budget != new_budget) {
    q.entity.budget = new_budget;
    if (q.entity.tree == bfq::Entity::Tree::kActive) ActivateRequeueQueue(q, false, false);
  }
}

// bfq_remove_request().
void Bfq::RemoveRequest(SchedRequest& rq) {
  Queue& q = *QueueOf(rq);
  if (q.next_rq == &rq) {
    q.next_rq = FindNextRq(q, rq, last_now_ns_);
    UpdatedNextReq(q);
  }
  if (auto f = q.fifo.find(Key{rq.fifo_time_ns, Priv(rq).fifo_seq});
      f != q.fifo.end() && f->second == &rq) {
    q.fifo.erase(f);
  }
  q.sort_list.erase(Key{Priv(rq).sort_sector, Priv(rq).seq});
  --q.queued[IsSync(rq) ? 1 : 0];
  --queued_;
  Priv(rq).queued = false;
  if (q.Empty()) {
    q.next_rq = nullptr;
    if (q.busy && &q != in_service_) {
      DelBusy(q, false);
      q.entity.budget = q.entity.service = 0;
    }
  }
}

// bfq_serv_to_charge(): async requests cost three times their size, unless the scenario
// is asymmetric (then bfq idles for the sync queues anyway).
int64_t Bfq::ServToCharge(const SchedRequest& rq, const Queue& q) const {
  if (q.sync || AsymmetricScenario(&q)) return rq.sectors;
  return static_cast<int64_t>(rq.sectors) * kBfqAsyncChargeFactor;
}

// ---- busy accounting and the hierarchy walks (bfq-wf2q.c) ----

// bfq_add_bfqq_busy() → bfq_activate_bfqq().
void Bfq::AddBusy(Queue& q) {
  ActivateRequeueQueue(q, q.non_blocking_wait_rq, false);
  q.non_blocking_wait_rq = false;
  q.busy = true;
  ++busy_per_class_[q.entity.class_idx];
  if (q.dispatched == 0) MarkPending(q, true);
}

// bfq_del_bfqq_busy() → bfq_deactivate_bfqq().
void Bfq::DelBusy(Queue& q, bool expiration) {
  q.busy = false;
  --busy_per_class_[q.entity.class_idx];
  DeactivateQueue(q, expiration);
  if (q.dispatched == 0) MarkPending(q, false);
}

// bfq_update_next_in_service() → bfq_update_parent_budget(): a group's budget is the
// budget of the child it would serve next.
void Bfq::SetGroupBudget(Group& g, bool expiration) {
  if (bfq::Entity* next = bfq::LookupNext(g.sd, g.sd.in_service != nullptr && !expiration)) {
    g.entity.budget = next->budget;
  }
}

// bfq_activate_requeue_entity() for a queue and its group.
void Bfq::ActivateRequeueQueue(Queue& q, bool non_blocking_wait_rq, bool expiration) {
  bfq::ActivateOrRequeueEntity(q.entity, non_blocking_wait_rq);
  Group& g = *groups_[q.group];
  if (g.IsRoot()) return;
  bfq::Entity& ge = g.entity;
  const bool in_service = groups_[0]->sd.in_service == &ge;
  if (in_service && !expiration) return;  // requeued when its queue expires
  const int64_t old_budget = ge.budget;
  SetGroupBudget(g, expiration);
  if (!expiration && ge.tree == bfq::Entity::Tree::kActive && ge.budget == old_budget) return;
  bfq::ActivateOrRequeueEntity(ge, false);
}

// bfq_deactivate_entity() for a queue and, if it was the group's last active child,
// its group; otherwise the group is repositioned for its new next child.
void Bfq::DeactivateQueue(Queue& q, bool expiration) {
  if (!bfq::DeactivateEntity(q.entity, true)) return;
  Group& g = *groups_[q.group];
  if (g.IsRoot()) return;
  if (g.sd.HasActive() || g.sd.in_service != nullptr) {
    const bool in_service = groups_[0]->sd.in_service == &g.entity;
    if (in_service && !expiration) return;
    if (g.entity.on_st) {
      SetGroupBudget(g, expiration);
      bfq::RequeueEntity(g.entity);
    }
    return;
  }
  bfq::DeactivateEntity(g.entity, true);
}

// bfq_get_next_queue(): walk from the root, setting the next entity in service at each
// level, down to a queue.
Bfq::Queue* Bfq::GetNextQueue(uint64_t /*now_ns*/) {
  if (BusyTotal() == 0) return nullptr;
  bfq::SchedData* sd = &groups_[0]->sd;
  for (;;) {
    bfq::Entity* e = bfq::LookupNext(*sd, false);
    if (e == nullptr) return nullptr;
    sd->in_service = e;
    bfq::ActiveExtract(bfq::TreeOf(*e), *e);
    if (e->my_sched_data == nullptr) return queues_[e->id].get();
    sd = e->my_sched_data;
  }
}

// __bfq_set_in_service_queue() + bfq_set_budget_timeout().
void Bfq::SetInService(Queue& q, uint64_t now_ns) {
  q.fifo_expire = false;
  last_budget_start_ns_ = now_ns;
  q.budget_timeout_ns = now_ns + tunables_.timeout_ns;
  in_service_ = &q;
}

// __bfq_bfqd_reset_in_service().
void Bfq::ResetInService() {
  Queue& q = *in_service_;
  q.wait_request = false;
  idle_timer_ns_ = kNoTimer;
  in_service_ = nullptr;
  for (bfq::Entity* e = &q.entity; e != nullptr; e = e->parent) e->sched_data->in_service = nullptr;
}

// bfq_select_queue(): keep the in-service queue while it has budget and requests, or
// while it is worth idling for (injecting I/O from other queues if allowed); otherwise
// expire it and pick the next queue by B-WF2Q+.
Bfq::Queue* Bfq::SelectQueue(uint64_t now_ns) {
  Queue* q = in_service_;
  if (q != nullptr && MayExpireForBudgetTimeout(*q, now_ns) && !MustIdle(*q)) {
    Expire(*q, false, BfqExpireReason::kBudgetTimeout, now_ns);
    q = nullptr;
  }
  for (;;) {
    if (q == nullptr) {
      q = GetNextQueue(now_ns);
      if (q == nullptr) return nullptr;
      SetInService(*q, now_ns);
    }
    if (q->next_rq != nullptr) {
      if (ServToCharge(*q->next_rq, *q) > q->BudgetLeft()) {
        Expire(*q, false, BfqExpireReason::kBudgetExhausted, now_ns);
        q = nullptr;
        continue;
      }
      if (q->wait_request) {  // a request arrived while idling: stop the timer
        q->wait_request = false;
        idle_timer_ns_ = kNoTimer;
      }
      return q;
    }
    if (q->wait_request || (q->dispatched != 0 && BetterToIdle(*q))) {
      // Plugged. With wr_coeff always 1 the kernel's choice reduces to: inject unless
      // idling is for throughput.
      Queue* inject = nullptr;
      if (profile_.injection && !IdlingBoostsThr(*q)) inject = InjectionCandidate(now_ns);
      if (inject != nullptr) rqs_injected_ = true;
      return inject;
    }
    Expire(*q, false, BfqExpireReason::kNoMoreRequests, now_ns);
    q = nullptr;
  }
}

// bfq_dispatch_rq_from_bfqq() + bfq_dispatch_remove().
SchedRequest* Bfq::DispatchFromQueue(Queue& q, uint64_t now_ns) {
  SchedRequest* rq = q.next_rq;
  bfq::Served(q.entity, ServToCharge(*rq, q));
  if (&q == in_service_ && wait_dispatch_) {
    wait_dispatch_ = false;
    waited_rq_ = rq;
  }
  ++q.dispatched;
  last_position_ = rq->End();  // bfq_update_peak_rate(): only its position bookkeeping
  RemoveRequest(*rq);
  if (&q != in_service_) {
    ++stats_.injected;
    return rq;
  }
  if (BusyTotal() > 1 && q.IdleClass()) Expire(q, false, BfqExpireReason::kBudgetExhausted, now_ns);
  return rq;
}

// bfq_dispatch_request() → __bfq_dispatch_request().
SchedRequest* Bfq::DispatchRequest(uint64_t now_ns) {
  last_now_ns_ = now_ns;
  SchedRequest* rq = nullptr;
  if (!dispatch_.empty()) {
    rq = dispatch_.front();
    dispatch_.pop_front();
    Priv(*rq).queued = false;
    Priv(*rq).on_dispatch_list = false;
    ++QueueOf(*rq)->dispatched;
  } else if (BusyTotal() != 0) {
    if (Queue* q = SelectQueue(now_ns)) {
      rq = DispatchFromQueue(*q, now_ns);
    } else if (in_service_ != nullptr) {
      ++stats_.plugged_nulls;
    }
  }
  if (rq == nullptr) return nullptr;
  ++tot_rq_in_driver_;
  Priv(*rq).started = true;
  ++counters_.dispatched;
  stats_.group_sectors[QueueOf(*rq)->group] += rq->sectors;
  return rq;
}

// bfq_has_work(): lockless, and true while idling with requests queued.
bool Bfq::HasWork() const { return !dispatch_.empty() || queued_ != 0; }

bool Bfq::MayDispatch(uint32_t /*hctx*/, uint64_t now_ns) const {
  if (!dispatch_.empty()) return true;
  if (BusyTotal() == 0) return false;
  const Queue* q = in_service_;
  if (q == nullptr || (MayExpireForBudgetTimeout(*q, now_ns) && !MustIdle(*q))) return queued_ != 0;
  if (q->next_rq != nullptr) return true;
  if (q->wait_request || (q->dispatched != 0 && BetterToIdle(*q))) {
    return profile_.injection && !IdlingBoostsThr(*q) && InjectionCandidate(now_ns) != nullptr;
  }
  return queued_ != 0;
}

namespace {

constexpr uint64_t kNsPerUs = 1'000;  // slice_idle_us

// bfq (block/bfq-iosched.c) with the cell's cgroup weights and bfq_attrs[] values.
// low_latency and strict_guarantees are only ever 0 here (not modelled; DeriveConfig).
std::unique_ptr<Elevator> CreateBfq(const ElevatorSetup& setup) {
  BfqProfile p = BfqProfile::ForKernel(setup.kernel_major, setup.kernel_minor);
  p.one_group_no_idle = setup.HasPatch("bfq-one-group-no-idle");
  p.batch_dispatch = setup.HasPatch("bfq-batch-dispatch");
  BfqTunables t;
  t.group_weights.push_back(0);  // [0] is the root
  for (const uint32_t w : setup.cgroup_weights) t.group_weights.push_back(w);
  setup.SetNs("slice_idle", kNsPerMs, t.slice_idle_ns);
  setup.SetNs("slice_idle_us", kNsPerUs, t.slice_idle_ns);
  setup.SetNs("timeout_sync", kNsPerMs, t.timeout_ns);
  // bfq_max_budget_store(): 0 asks for bfq_calc_max_budget() from the estimated peak rate,
  // which is not modelled; the model keeps bfq_default_max_budget then.
  int64_t max_budget = 0;
  setup.SetInt("max_budget", max_budget);
  if (max_budget > 0) t.max_budget = max_budget;
  setup.SetNs("fifo_expire_sync", kNsPerMs, t.fifo_expire_sync_ns);
  setup.SetNs("fifo_expire_async", kNsPerMs, t.fifo_expire_async_ns);
  setup.SetUint("back_seek_max", t.back_seek_max_kib);
  setup.SetUint("back_seek_penalty", t.back_seek_penalty);
  return std::make_unique<Bfq>(p, t);
}

// bfq (block/bfq-iosched.c, 6.x) serving one queue shared by the jobs (stable merge):
// - bio_merge: q->last_merge, the last_merge request, a hash bucket, the queue's sort
//   root and the rb walk: 8.
// - insert, per request: bfqd's queued and position lines, q->last_merge, two hash
//   buckets, the eight lines of the shared bfq_queue (refs, sort list, fifo/entity,
//   allocated, dispatched/flags, think and seek time, ...), the fifo tail, next_rq and
//   the rb walk: 18.
// - dispatch: four bfqd lines (counters, in_service/position, peak-rate sampling), the
//   service tree's vtime, five queue lines, the request, its rb and fifo neighbours, a
//   hash bucket, q->last_merge: 18; each further request of a batch 6; an empty
//   dispatch still checks idling and injection: 8.
// - completion (bfq_completed_request): four bfqd lines, about six queue lines, the
//   submitter's bic: 10.
constexpr LockSiteLines kBfqLines = {.merge = 8,
                                     .insert_first = 18,
                                     .insert_extra = 18,
                                     .dispatch_first = 18,
                                     .dispatch_extra = 6,
                                     .dispatch_empty = 8,
                                     .completion = 10,
                                     .insert_per_request = true};

}  // namespace

const ElevatorType& BfqType() {
  static const ElevatorType* const kType = new ElevatorType{
      .name = "bfq",
      .create = &CreateBfq,
      .lock_name = "bfqd->lock",
      .lines = kBfqLines,
      .patches = {"bfq-one-group-no-idle", "bfq-batch-dispatch"},
      // low_latency and strict_guarantees: only 0 is modelled, which is what the model
      // does without reading them (validate refuses other values on sim:).
      .tunables = {"slice_idle", "slice_idle_us", "timeout_sync", "max_budget", "fifo_expire_sync",
                   "fifo_expire_async", "back_seek_max", "back_seek_penalty", "low_latency",
                   "strict_guarantees"},
  };
  return *kType;
}

}  // namespace blkbench::engine
