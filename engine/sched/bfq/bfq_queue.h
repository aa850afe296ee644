// Bfq's private per-queue and per-group state (struct bfq_queue, struct bfq_group),
// shared by bfq.cc and bfq_idle.cc only.
#ifndef BLKBENCH_ENGINE_SCHED_BFQ_QUEUE_H_
#define BLKBENCH_ENGINE_SCHED_BFQ_QUEUE_H_

#include <array>
#include <cstdint>
#include <map>
#include <utility>

#include "engine/sched/bfq/bfq.h"
#include "engine/sched/bfq/bfq_wf2q.h"
#include "engine/sched/flat_map.h"

namespace blkbench::engine {

// struct bfq_queue: one per (process io context, cgroup) for sync I/O; one shared per
// (cgroup, ioprio class, level) for async I/O.
struct Bfq::Queue {
  bfq::Entity entity;
  uint32_t index = 0;
  uint32_t ioc = 0;
  uint32_t group = 0;
  bool sync = true;
  IoprioClass ioprio_class = IoprioClass::kBe;
  uint32_t ioprio_level = 4;
  uint64_t creation_ns = 0;  // bfqq->creation_time

  FlatMap<Key, SchedRequest*> sort_list;  // (sector, seq)
  FlatMap<Key, SchedRequest*> fifo;       // (fifo_time, seq)
  SchedRequest* next_rq = nullptr;
  std::array<uint32_t, 2> queued{};  // [sync]
  uint32_t dispatched = 0;           // in the driver
  int64_t max_budget = 0;
  uint64_t budget_timeout_ns = 0;

  // BFQQF_* flags.
  bool busy = false;
  bool wait_request = false;
  bool non_blocking_wait_rq = false;
  bool fifo_expire = false;
  bool has_short_ttime = true;
  bool io_bound = true;
  bool just_created = true;

  // Counted in num_groups_with_pending_reqs / queue_weights_tree: busy or in flight.
  bool pending = false;
  bool on_active_list = false;

  uint32_t seek_history = 1;  // one bit per request, 1 = seeky
  uint64_t last_request_pos = 0;

  // struct bfq_ttime.
  uint64_t last_end_request_ns = 0;
  uint64_t ttime_samples = 0;
  uint64_t ttime_total = 0;
  uint64_t ttime_mean = 0;
  uint64_t io_start_time_ns = 0;
  uint64_t tot_idle_time_ns = 0;

  // Injection (bfq_update_inject_limit()).
  uint32_t inject_limit = 0;
  uint64_t last_serv_time_ns = 0;
  uint64_t decrease_time_ns = 0;

  bool Empty() const { return sort_list.empty(); }
  int64_t BudgetLeft() const { return entity.budget - entity.service; }  // bfq_bfqq_budget_left
  bool Seeky() const { return __builtin_popcount(seek_history) > 19; }   // BFQQ_SEEKY
  bool IdleClass() const { return ioprio_class == IoprioClass::kIdle; }
};

// struct bfq_group. The root group has no entity: its queues sit in the root level.
struct Bfq::Group {
  bfq::Entity entity;  // scheduled in the root level (unused for the root group)
  bfq::SchedData sd;
  uint32_t index = 0;
  uint32_t pending_queues = 0;  // bfqg->num_queues_with_pending_reqs
  // bfqg->last_bfqq_created (bfqd's for the root group): index + 1 of the sync queue that
  // later ones of this group are stably merged into, 0 = none yet.
  uint32_t last_created = 0;

  bool IsRoot() const { return index == 0; }
};

}  // namespace blkbench::engine

#endif  // BLKBENCH_ENGINE_SCHED_BFQ_QUEUE_H_
