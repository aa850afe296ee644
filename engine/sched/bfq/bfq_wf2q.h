// B-WF2Q+ for the bfq model: entities (queues and groups), per-class service trees with
// virtual time, and the timestamp rules of block/bfq-wf2q.c.
#ifndef BLKBENCH_ENGINE_SCHED_BFQ_WF2Q_H_
#define BLKBENCH_ENGINE_SCHED_BFQ_WF2Q_H_

#include <array>
#include <cstdint>
#include <vector>

namespace blkbench::engine::bfq {

// WFQ_SERVICE_SHIFT: timestamps are service (sectors) << 22 / weight.
inline constexpr int kWfqServiceShift = 22;
// BFQ_IOPRIO_CLASSES: one service tree per class (RT, BE, IDLE) at every level.
inline constexpr int kNumClasses = 3;

struct SchedData;

// struct bfq_entity: a queue (my_sched_data == nullptr) or a group.
struct Entity {
  enum class Tree : uint8_t { kNone, kActive, kIdle };

  uint64_t start = 0;   // virtual start time
  uint64_t finish = 0;  // virtual finish time
  uint32_t weight = 0;
  int64_t budget = 0;   // sectors
  int64_t service = 0;  // sectors received in the current slot
  Tree tree = Tree::kNone;
  bool on_st = false;                  // on_st_or_in_serv: counted in its tree's wsum
  uint8_t class_idx = 1;               // ioprio_class - 1; groups are BE
  SchedData* sched_data = nullptr;     // the level this entity is scheduled in
  SchedData* my_sched_data = nullptr;  // the level a group entity owns
  Entity* parent = nullptr;            // owning group entity, nullptr at the root level
  uint64_t tree_seq = 0;               // insertion order: equal finishes go right
  uint32_t id = 0;                     // the owning queue's or group's index
};

// struct bfq_service_tree. The kernel uses an rb-tree ordered by finish and augmented
// with min_start; the model keeps small unordered vectors (tens of entities) and scans,
// picking the same entity: the eligible one with the smallest (finish, insertion order).
struct ServiceTree {
  uint64_t vtime = 0;
  uint64_t wsum = 0;  // weights of the entities on this tree or in service from it
  std::vector<Entity*> active;
  std::vector<Entity*> idle;
  // Source of insertion stamps. Sharing one clock across all trees makes tree_seq also
  // the order of bfqd->active_list (most recently activated queue first).
  uint64_t* clock = nullptr;
};

// struct bfq_sched_data: one hierarchy level (the root group or a group).
struct SchedData {
  std::array<ServiceTree, kNumClasses> st;
  Entity* in_service = nullptr;
  Entity* owner = nullptr;  // the group entity owning this level (nullptr for root)

  bool HasActive() const;
};

uint64_t Delta(int64_t service, uint64_t weight);     // bfq_delta()
void CalcFinish(Entity& entity, int64_t service);     // bfq_calc_finish()
ServiceTree& TreeOf(Entity& entity);                  // bfq_entity_service_tree()
void ActiveExtract(ServiceTree& st, Entity& entity);  // bfq_active_extract()

// __bfq_activate_entity(): a true activation (the entity was idle or never active).
// `non_blocking_wait_rq` back-shifts the timestamps of a queue recovering a service hole.
void ActivateEntity(Entity& entity, bool non_blocking_wait_rq);
// __bfq_requeue_entity(): reposition an active or in-service entity after its budget or
// its received service changed.
void RequeueEntity(Entity& entity);
// __bfq_activate_requeue_entity(): requeue if in service or active, else activate.
void ActivateOrRequeueEntity(Entity& entity, bool non_blocking_wait_rq);
// __bfq_deactivate_entity(): off its trees; onto the idle tree if allowed and its finish
// is still ahead of the virtual time. false if it was not active.
bool DeactivateEntity(Entity& entity, bool ins_into_idle_tree);
// bfq_lookup_next_entity(): the eligible entity with the smallest finish of the highest
// non-empty class; jumps the virtual time forward when nothing is eligible, unless an
// entity is in service at this level. (The idle-class starvation timeout is not modelled.)
Entity* LookupNext(SchedData& sd, bool in_service);
// bfq_bfqq_served(): charge `served` sectors to the leaf and all its ancestors.
void Served(Entity& leaf, int64_t served);

}  // namespace blkbench::engine::bfq

#endif  // BLKBENCH_ENGINE_SCHED_BFQ_WF2Q_H_
