// Elevator: the engine's I/O-scheduler policy interface, modelled on the kernel's
// struct elevator_mq_ops (include/linux/elevator.h), plus the request type it schedules.
#ifndef BLKBENCH_ENGINE_SCHED_ELEVATOR_H_
#define BLKBENCH_ENGINE_SCHED_ELEVATOR_H_

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "absl/status/status.h"

namespace blkbench::engine {

// IOPRIO_CLASS_RT / BE / IDLE (include/uapi/linux/ioprio.h). IOPRIO_CLASS_NONE is
// folded into kBe by the caller, as ioprio_class_to_prio[] does in mq-deadline.
enum class IoprioClass : uint8_t { kRt = 0, kBe = 1, kIdle = 2 };

// A request as the scheduler sees it. Owned by the caller (the engine's request pool);
// elevators keep borrowed pointers between insert and dispatch/merge.
struct SchedRequest {
  uint64_t id = 0;
  uint64_t sector = 0;   // blk_rq_pos()
  uint32_t sectors = 0;  // blk_rq_sectors()
  bool write = false;    // rq_data_dir()
  bool sync = false;     // op_is_sync()
  IoprioClass ioprio = IoprioClass::kBe;
  uint64_t submit_time_ns = 0;  // rq->start_time_ns
  uint64_t fifo_time_ns = 0;    // rq->fifo_time: the FIFO deadline, set at insert

  // Elevator-private state (rq->elv.priv[], typed). Reset by PrepareRequest().
  struct ElvPriv {
    bool counted = false;  // mq-deadline's priv[0]: counted in stats.inserted
    bool queued = false;   // in a sort tree / FIFO / dispatch list
    bool on_dispatch_list = false;
    uint64_t seq = 0;          // insertion sequence: tie-break in the sort tree
    uint64_t fifo_seq = 0;     // position in the FIFO (list_move on merge copies it)
    uint64_t sort_sector = 0;  // the sector the request is filed under in the sort tree
    uint64_t hash_end = 0;     // the end sector it is filed under in the merge hash
    bool hashed = false;       // ELV_ON_HASH()
  } elv;

  uint64_t End() const { return sector + sectors; }  // rq_end_sector()
};

// A bio offered for merging (blk_mq_sched_bio_merge()).
struct SchedBio {
  uint64_t sector = 0;
  uint32_t sectors = 0;
  bool write = false;
  IoprioClass ioprio = IoprioClass::kBe;
  uint64_t End() const { return sector + sectors; }
};

// blk_insert_t: BLK_MQ_INSERT_AT_HEAD is the only flag the elevators look at.
struct InsertFlags {
  bool at_head = false;
};

enum class MergeType : uint8_t { kNone, kBack, kFront };  // enum elv_merge

struct BioMergeResult {
  MergeType type = MergeType::kNone;
  SchedRequest* rq = nullptr;     // the request that absorbed the bio
  SchedRequest* freed = nullptr;  // a request merged away as a follow-on (attempt_*_merge);
                                  // the caller must FinishRequest() it and free its tag
};

// Queue limits an elevator is initialised with (elevator_init_mq / depth_updated).
struct ElevatorQueueLimits {
  uint32_t nr_requests = 64;    // q->nr_requests (the sched_tags depth)
  uint32_t max_sectors = 2560;  // queue_max_sectors(): caps merged request size
};

// Counters the core checks at teardown. Every inserted request ends exactly once
// (dispatched and completed, or merged away and freed).
struct ElevatorCounters {
  uint64_t inserted = 0;    // first insertion of a request
  uint64_t reinserted = 0;  // insertion of an already-counted request (requeue)
  uint64_t dispatched = 0;
  uint64_t merged = 0;      // requests merged into another request (requests_merged)
  uint64_t bio_merges = 0;  // bios merged into a queued request
  uint64_t completed = 0;   // FinishRequest() on a counted request

  // OK iff the elevator is empty and every request is accounted for.
  absl::Status CheckBalanced(uint64_t still_queued) const;
};

// struct elevator_mq_ops. Optional hooks have no-op defaults (the core null-checks them
// in the kernel); DispatchRequest is mandatory. Time is simulated ns. Locking (dd->lock
// etc.) is the caller's business: these are the unlocked bodies.
class Elevator {
 public:
  virtual ~Elevator() = default;

  // --- Lifecycle: init_sched / depth_updated / exit_sched ---
  virtual absl::Status Init(const ElevatorQueueLimits& limits) = 0;
  // exit_sched: returns CheckBalanced() of the counters (teardown check).
  virtual absl::Status Exit() { return counters().CheckBalanced(0); }

  // --- Merging: bio_merge / request_merged / requests_merged ---
  // Tries to merge `bio` into a queued request; kNone if it must become a new request.
  virtual BioMergeResult BioMerge(const SchedBio& /*bio*/) { return {}; }
  // The core grew `rq` by a merge of `type` (elv_merged_request()).
  virtual void RequestMerged(SchedRequest& /*rq*/, MergeType /*type*/) {}
  // `next` was merged into `rq` and is about to be freed (elv_merge_requests()).
  virtual void RequestsMerged(SchedRequest& /*rq*/, SchedRequest& /*next*/) {}

  // --- Depth: limit_depth ---
  // The shallow depth for an allocation of this kind (blk_mq_alloc_data.shallow_depth),
  // or nullopt for no limit.
  virtual std::optional<uint32_t> LimitDepth(bool /*write*/, bool /*sync*/) const {
    return std::nullopt;
  }

  // --- Request flow ---
  // insert_requests: the whole batch under one lock hold. Requests absorbed by an
  // insert-merge are appended to `freed`; the caller FinishRequest()s and frees them.
  virtual void InsertRequests(std::span<SchedRequest* const> rqs, InsertFlags flags,
                              uint64_t now_ns, std::vector<SchedRequest*>& freed) = 0;
  // dispatch_request (mandatory): the next request for the driver, or nullptr.
  virtual SchedRequest* DispatchRequest(uint64_t now_ns) = 0;
  virtual bool HasWork() const = 0;
  // prepare_request: a fresh request was allocated with a sched tag.
  virtual void PrepareRequest(SchedRequest& rq) { rq.elv = {}; }
  // finish_request: the request is being freed (completed or merged away).
  virtual void FinishRequest(SchedRequest& /*rq*/) {}
  // completed_request: device completion (kyber uses it; mq-deadline does not).
  virtual void CompletedRequest(SchedRequest& /*rq*/, uint64_t /*now_ns*/) {}
  // requeue_request: bfq only; requeued requests come back via InsertRequests.
  virtual void RequeueRequest(SchedRequest& /*rq*/) {}

  virtual const ElevatorCounters& counters() const = 0;
};

}  // namespace blkbench::engine

#endif  // BLKBENCH_ENGINE_SCHED_ELEVATOR_H_
