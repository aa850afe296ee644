// B-WF2Q+ timestamping and selection (block/bfq-wf2q.c). Each function cites the kernel
// function it mirrors; the hierarchy walks (bfq_activate_requeue_entity() and friends)
// live in bfq.cc because they need the queue state.
#include "engine/sched/bfq/bfq_wf2q.h"

#include <algorithm>
#include <cassert>

namespace blkbench::engine::bfq {
namespace {

// Orders like the kernel's rb-tree: by finish, equal finishes in insertion order.
bool Before(const Entity* a, const Entity* b) {
  return a->finish != b->finish ? a->finish < b->finish : a->tree_seq < b->tree_seq;
}

void Erase(std::vector<Entity*>& v, Entity* e) {
  auto it = std::find(v.begin(), v.end(), e);
  assert(it != v.end());
  *it = v.back();
  v.pop_back();
}

uint64_t NextSeq(ServiceTree& st) {
  assert(st.clock != nullptr);
  return ++*st.clock;
}

void ActiveInsert(ServiceTree& st, Entity& entity) {  // bfq_active_insert()
  entity.tree = Entity::Tree::kActive;
  entity.tree_seq = NextSeq(st);
  st.active.push_back(&entity);
}

void IdleInsert(ServiceTree& st, Entity& entity) {  // bfq_idle_insert()
  entity.tree = Entity::Tree::kIdle;
  entity.tree_seq = NextSeq(st);
  st.idle.push_back(&entity);
}

void IdleExtract(ServiceTree& st, Entity& entity) {  // bfq_idle_extract()
  Erase(st.idle, &entity);
  entity.tree = Entity::Tree::kNone;
}

// bfq_forget_entity(): no longer counted in wsum.
void ForgetEntity(ServiceTree& st, Entity& entity) {
  entity.on_st = false;
  st.wsum -= entity.weight;
}

// bfq_forget_idle(): release the idle entity with the smallest finish once the virtual
// time has passed it (one per call, as in the kernel, to keep updates O(log N)).
void ForgetIdle(ServiceTree& st) {
  if (st.idle.empty()) return;
  Entity* first = *std::min_element(st.idle.begin(), st.idle.end(), Before);
  if (first->finish <= st.vtime) {
    IdleExtract(st, *first);
    ForgetEntity(st, *first);
  }
}

// bfq_update_fin_time_enqueue(): finish from the budget, then a back-shifted queue is
// pushed up just enough for its finish to reach the virtual time.
void UpdateFinTimeEnqueue(Entity& entity, ServiceTree& st, bool backshifted) {
  CalcFinish(entity, entity.budget);
  if (backshifted && st.vtime > entity.finish) {
    const uint64_t delta = st.vtime - entity.finish;  // wr_coeff is 1: no division
    entity.start += delta;
    entity.finish += delta;
  }
  ActiveInsert(st, entity);
}

void UpdateVtime(ServiceTree& st, uint64_t new_value) {  // bfq_update_vtime()
  if (new_value > st.vtime) {
    st.vtime = new_value;
    ForgetIdle(st);
  }
}

// bfq_first_active_entity(): the eligible (start <= vtime) entity with the smallest finish.
Entity* FirstActive(const ServiceTree& st, uint64_t vtime) {
  Entity* best = nullptr;
  for (Entity* e : st.active) {
    if (e->start <= vtime && (best == nullptr || Before(e, best))) best = e;
  }
  return best;
}

// __bfq_lookup_next_entity().
Entity* LookupInTree(ServiceTree& st, bool in_service) {
  if (st.active.empty()) return nullptr;
  // bfq_calc_vtime_jump(): the virtual time at which at least one entity is eligible.
  uint64_t min_start = UINT64_MAX;
  for (const Entity* e : st.active) min_start = std::min(min_start, e->start);
  const uint64_t new_vtime = std::max(min_start, st.vtime);
  if (!in_service) UpdateVtime(st, new_vtime);
  return FirstActive(st, new_vtime);
}

}  // namespace

bool SchedData::HasActive() const {
  return std::any_of(st.begin(), st.end(), [](const ServiceTree& t) { return !t.active.empty(); });
}

uint64_t Delta(int64_t service, uint64_t weight) {
  assert(service >= 0 && weight > 0);
  return (static_cast<uint64_t>(service) << kWfqServiceShift) / weight;
}

void CalcFinish(Entity& entity, int64_t service) {
  entity.finish = entity.start + Delta(service, entity.weight);
}

ServiceTree& TreeOf(Entity& entity) { return entity.sched_data->st[entity.class_idx]; }

void ActiveExtract(ServiceTree& st, Entity& entity) {
  Erase(st.active, &entity);
  entity.tree = Entity::Tree::kNone;
}

void ActivateEntity(Entity& entity, bool non_blocking_wait_rq) {
  ServiceTree& st = TreeOf(entity);
  bool backshifted = false;
  uint64_t min_vstart = st.vtime;
  if (non_blocking_wait_rq && st.vtime > entity.finish) {
    backshifted = true;
    min_vstart = entity.finish;
  }
  if (entity.tree == Entity::Tree::kIdle) {
    IdleExtract(st, entity);
    entity.start = std::max(min_vstart, entity.finish);
  } else {
    // Its old finish is in the past for sure, or it would be on the idle tree.
    entity.start = min_vstart;
    st.wsum += entity.weight;
    entity.on_st = true;
  }
  UpdateFinTimeEnqueue(entity, st, backshifted);
}

void RequeueEntity(Entity& entity) {
  ServiceTree& st = TreeOf(entity);
  if (&entity == entity.sched_data->in_service) {
    // Move the start past the service received in this slot, then re-stamp the finish
    // from the (possibly new) budget.
    CalcFinish(entity, entity.service);
    entity.start = entity.finish;
    if (entity.tree == Entity::Tree::kActive) ActiveExtract(st, entity);
  } else {
    ActiveExtract(st, entity);
  }
  UpdateFinTimeEnqueue(entity, st, false);
}

void ActivateOrRequeueEntity(Entity& entity, bool non_blocking_wait_rq) {
  if (&entity == entity.sched_data->in_service || entity.tree == Entity::Tree::kActive) {
    RequeueEntity(entity);
  } else {
    ActivateEntity(entity, non_blocking_wait_rq);
  }
}

bool DeactivateEntity(Entity& entity, bool ins_into_idle_tree) {
  if (!entity.on_st) return false;
  ServiceTree& st = TreeOf(entity);
  SchedData& sd = *entity.sched_data;
  const bool is_in_service = &entity == sd.in_service;
  if (is_in_service) {
    CalcFinish(entity, entity.service);
    sd.in_service = nullptr;
  }
  if (entity.tree == Entity::Tree::kActive) {
    ActiveExtract(st, entity);
  } else if (!is_in_service && entity.tree == Entity::Tree::kIdle) {
    IdleExtract(st, entity);
  }
  if (!ins_into_idle_tree || entity.finish <= st.vtime) {
    ForgetEntity(st, entity);
  } else {
    IdleInsert(st, entity);
  }
  return true;
}

Entity* LookupNext(SchedData& sd, bool in_service) {
  for (ServiceTree& st : sd.st) {
    if (Entity* e = LookupInTree(st, in_service)) return e;
  }
  return nullptr;
}

void Served(Entity& leaf, int64_t served) {
  for (Entity* e = &leaf; e != nullptr; e = e->parent) {
    ServiceTree& st = TreeOf(*e);
    e->service += served;
    if (st.wsum > 0) st.vtime += Delta(served, st.wsum);
    ForgetIdle(st);
  }
}

}  // namespace blkbench::engine::bfq
