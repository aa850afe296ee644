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

// The operation class beyond the data direction (req_op()): kyber_sched_domain() maps
// reads/writes to READ/WRITE, REQ_OP_DISCARD to DISCARD and everything else (flush,
// zone ops, ...) to OTHER.
enum class SchedOp : uint8_t { kReadWrite = 0, kDiscard = 1, kOther = 2 };

inline constexpr uint64_t kNsPerMs = 1'000'000;  // simulated time is in ns

// TimerDeadline() when the elevator has no timer armed.
inline constexpr uint64_t kNoTimer = UINT64_MAX;
// TakeRunRequests(): "run every hardware queue" (blk_mq_run_hw_queues()).
inline constexpr uint32_t kAllHwQueues = UINT32_MAX;
// Requests one lock hold hands out with dd-batch-dispatch / bfq-batch-dispatch (the
// early versions of Yu Kuai's series; v4 used the budgets obtained or nr_requests).
inline constexpr int kBatchDispatchMax = 8;

// A request as the scheduler sees it. Owned by the caller (the engine's request pool);
// elevators keep borrowed pointers between insert and dispatch/merge. `id` names the
// request: an elevator keys its private per-request state by it (RequestData).
struct SchedRequest {
  uint64_t id = 0;
  uint64_t sector = 0;   // blk_rq_pos()
  uint32_t sectors = 0;  // blk_rq_sectors()
  bool write = false;    // rq_data_dir()
  bool sync = false;     // op_is_sync()
  IoprioClass ioprio = IoprioClass::kBe;
  uint64_t submit_time_ns = 0;  // rq->start_time_ns
  uint64_t fifo_time_ns = 0;    // rq->fifo_time: the FIFO deadline, set at insert
  // Set by the caller when the driver starts the request (blk_mq_start_request() →
  // rq->io_start_time_ns); kyber's I/O-latency histogram reads it at completion.
  uint64_t io_start_time_ns = 0;

  // Who issued it and where it was queued; the caller fills these in at allocation.
  SchedOp op = SchedOp::kReadWrite;
  uint8_t ioprio_level = 4;  // IOPRIO_PRIO_LEVEL() 0..7 (BE default 4 → bfq weight 40)
  uint32_t ioc = 0;          // io context: one per process; threads of a process share it
  uint32_t group = 0;        // blkcg (cgroup) index, 0 = root
  uint32_t cpu = 0;          // rq->mq_ctx->cpu: the software queue it was submitted on
  uint32_t hctx = 0;         // the hardware queue it maps to (rq->mq_hctx)

  // Set by the elevator when this request is merged away into another (attempt_merge):
  // the survivor, whose bios the core must end this request's bios with.
  SchedRequest* merged_into = nullptr;

  uint64_t End() const { return sector + sectors; }  // rq_end_sector()
};

// rq->elv.priv[], typed: an elevator's private per-request state, one T per request
// id, owned by the elevator (the core never sees T). A request's entry is reset to T{}
// by Reset() in prepare_request; ids beyond the reserved pool grow the table.
template <class T>
class RequestData {
 public:
  void Reserve(size_t n) {
    if (v_.size() < n) v_.resize(n);
  }
  T& operator[](const SchedRequest& rq) {
    if (rq.id >= v_.size()) v_.resize(rq.id + 1);
    return v_[rq.id];
  }
  // A request the elevator never prepared reads as T{}.
  const T& operator[](const SchedRequest& rq) const {
    static const T kFresh{};
    return rq.id < v_.size() ? v_[rq.id] : kFresh;
  }
  void Reset(const SchedRequest& rq) { (*this)[rq] = T{}; }

 private:
  std::vector<T> v_;
};

// A bio offered for merging (blk_mq_sched_bio_merge()).
struct SchedBio {
  uint64_t sector = 0;
  uint32_t sectors = 0;
  bool write = false;
  IoprioClass ioprio = IoprioClass::kBe;
  // Only bfq and kyber read these (mq-deadline merges queue-wide): the issuer's queue
  // (bfq: the bio merges only into its own bfq_queue) and software queue (kyber).
  bool sync = false;  // op_is_sync(): reads always, writes with REQ_SYNC
  SchedOp op = SchedOp::kReadWrite;
  uint32_t ioc = 0;
  uint32_t group = 0;
  uint32_t cpu = 0;
  uint32_t hctx = 0;
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
  uint32_t nr_requests = 64;    // q->nr_requests (the sched_tags depth, per hctx)
  uint32_t max_sectors = 2560;  // queue_max_sectors(): caps merged request size
  // Device facts bfq's idling decisions use (blk_queue_nonrot(), bfqd->hw_tag). The
  // kernel detects hw_tag from the observed in-driver depth (> 3 requests in flight,
  // bfq_update_hw_tag()); the model states it: true for NCQ/multi-queue devices.
  bool rotational = false;
  bool hw_tags = true;
  uint32_t nr_hw_queues = 1;  // kyber keeps per-hctx state
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
  // Per-process queues (bfq's bfq_queues): created, and merged at creation into an
  // earlier one (bfq's stable merge). 0 for elevators without such queues.
  uint64_t queues_created = 0;
  uint64_t queues_merged = 0;

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
  // depth_updated: the smallest shallow depth limit_depth will ask for, which the core
  // gives sbitmap_queue_min_shallow_depth() (it sizes wake_batch); nullopt for none.
  // Called after Init(). The default is the smallest LimitDepth() over every kind of
  // allocation (bfq_depth_updated(), kyber_depth_updated()).
  virtual std::optional<uint32_t> MinShallowDepth() const;
  // true if LimitDepth() is a depth for the whole bitmap that the core converts to a
  // per-word one where the sbitmap applies shallow depths per word (6.10+ mq-deadline's
  // dd_to_word_depth()); false if it is already in the sbitmap's units.
  virtual bool LimitDepthIsQueueWide() const { return false; }

  // --- Request flow ---
  // insert_requests: the whole batch under one lock hold. Requests absorbed by an
  // insert-merge are appended to `freed`; the caller FinishRequest()s and frees them.
  virtual void InsertRequests(std::span<SchedRequest* const> rqs, InsertFlags flags,
                              uint64_t now_ns, std::vector<SchedRequest*>& freed) = 0;
  // dispatch_request (mandatory): the next request for the driver, or nullptr.
  virtual SchedRequest* DispatchRequest(uint64_t now_ns) = 0;
  virtual bool HasWork() const = 0;

  // --- Per-hardware-queue variants (dispatch_request(hctx), has_work(hctx)) ---
  // Kyber keeps its lists per hctx; the single-queue schedulers (mq-deadline, bfq)
  // ignore `hctx`. The model should always call these forms.
  virtual SchedRequest* DispatchRequestFor(uint32_t /*hctx*/, uint64_t now_ns) {
    return DispatchRequest(now_ns);
  }
  virtual bool HasWorkFor(uint32_t /*hctx*/) const { return HasWork(); }
  // A side-effect-free prediction of DispatchRequestFor(hctx, now_ns). false means it
  // would certainly return nullptr (bfq idling with nothing to inject, kyber out of
  // tokens); true means it would return a request for bfq and kyber, and "maybe"
  // (= HasWork) for the others. HasWork stays the kernel's lockless has_work: it is
  // true while bfq idles, so the model charges a lock round-trip for nothing there.
  virtual bool MayDispatch(uint32_t hctx, uint64_t /*now_ns*/) const { return HasWorkFor(hctx); }
  // QUEUE_FLAG_SQ_SCHED: one scheduler instance serves all hctxs (mq-deadline, bfq).
  virtual bool SingleQueue() const { return true; }
  // prepare_request: a fresh request was allocated with a sched tag; the elevator
  // resets its private state for it.
  virtual void PrepareRequest(SchedRequest& /*rq*/) {}
  // finish_request: the request is being freed (completed or merged away).
  virtual void FinishRequest(SchedRequest& /*rq*/) {}
  // completed_request: device completion of a request this elevator dispatched, called
  // before FinishRequest (__blk_mq_end_request() order). Kyber samples latency here; bfq
  // runs bfq_completed_request() (in-flight counts, think time, idling, expiry) here
  // because finish_request carries no time. mq-deadline does not use it.
  virtual void CompletedRequest(SchedRequest& /*rq*/, uint64_t /*now_ns*/) {}
  // requeue_request: the driver gave a started request back (bfq: counts as completed;
  // kyber: returns its token); it comes back via InsertRequests.
  virtual void RequeueRequest(SchedRequest& /*rq*/) {}

  // --- Dispatch batching (a patch flag the elevator was created with) ---
  // dispatch_request calls per hold of the elevator lock while the hardware queue is not
  // dispatch_busy: 1 in every released kernel, kBatchDispatchMax with
  // dd-batch-dispatch / bfq-batch-dispatch.
  virtual int DispatchBatch() const { return 1; }

  // --- Dispatch serialization (dd-serialize-dispatch: DD_DISPATCHING) ---
  // If a dispatch that another context started is still holding the elevator lock at
  // now_ns, the time its hold ends: the caller then returns no request without taking
  // the lock, and relies on a later run. nullopt: go ahead (every released kernel).
  virtual std::optional<uint64_t> DispatchingUntil(uint64_t /*now_ns*/) const {
    return std::nullopt;
  }
  // The caller's dispatch (under the elevator lock) releases the lock at release_ns.
  virtual void DispatchLockReleased(uint64_t /*release_ns*/) {}

  // --- Staged insertion (dd-insert-lists) ---
  // true if insert_requests only appends to insertion lists under their own lock
  // (ElevatorType::insert_lock, not the global one): the core then calls
  // StageRequests() instead of InsertRequests(), and SortStaged() under the global lock
  // before dispatching. HasWork() counts staged requests.
  virtual bool StagesInserts() const { return false; }
  virtual void StageRequests(std::span<SchedRequest* const> /*rqs*/) {}
  // Requests staged and not yet sorted in.
  virtual size_t staged() const { return 0; }
  // Sorts every staged request in, in staging order (as InsertRequests, appending
  // insert-merged requests to `freed`). Returns how many.
  virtual size_t SortStaged(uint64_t /*now_ns*/, std::vector<SchedRequest*>& /*freed*/) {
    return 0;
  }

  // --- Completion locking ---
  // true if the kernel takes the elevator's global lock on every completion (bfq:
  // bfqd->lock in bfq_finish_requeue_request(), one hold covering CompletedRequest +
  // FinishRequest). mq-deadline and kyber complete locklessly.
  virtual bool LockOnCompletion() const { return false; }

  // --- Timer (bfq's idle_slice_timer, kyber's stats timer) ---
  // Absolute deadline of the elevator's timer in simulated ns, or kNoTimer. Any hook may
  // arm, move or cancel it: re-read it after every call into the elevator.
  virtual uint64_t TimerDeadline() const { return kNoTimer; }
  // Called once at now_ns >= TimerDeadline() (bfq_idle_slice_timer(), kyber_timer_fn()).
  // bfq takes bfqd->lock here; kyber's timer is lockless.
  virtual void TimerExpired(uint64_t /*now_ns*/) {}

  // --- Queue kicks ---
  // Hardware-queue runs the elevator asked for since the last call: bfq_schedule_dispatch()
  // (kAllHwQueues, async) and kyber_domain_wake() (that hctx, async). Appends to `hctxs`
  // and forgets them; the model runs those queues asynchronously (kblockd).
  virtual void TakeRunRequests(std::vector<uint32_t>& /*hctxs*/) {}

  virtual const ElevatorCounters& counters() const = 0;

 protected:
  // The shared tail of blk_mq_sched_try_merge() once elv_merge() found `found.rq`:
  // bio_attempt_back_merge() / bio_attempt_front_merge() grow it by `bio`, then
  // attempt_back_merge() / attempt_front_merge() fold in the neighbour the bio made
  // contiguous (reported in BioMergeResult::freed). The caller counts the merge.
  BioMergeResult ApplyBioMerge(BioMergeResult found, const SchedBio& bio);

  // elevator_mq_ops former_request / next_request: `rq`'s neighbours in sector order
  // (elv_rb_former_request / elv_rb_latter_request), nullptr at either end.
  virtual SchedRequest* FormerRequest(const SchedRequest& /*rq*/) const { return nullptr; }
  virtual SchedRequest* LatterRequest(const SchedRequest& /*rq*/) const { return nullptr; }
  // attempt_merge()'s checks for `next` appended to `rq`, and the merge itself
  // (elv_merge_requests): `next` goes away with merged_into = &rq.
  virtual bool RqMergeOk(const SchedRequest& /*rq*/, const SchedRequest& /*next*/) const {
    return false;
  }
  virtual void MergeRequests(SchedRequest& /*rq*/, SchedRequest& /*next*/) {}
  // bio_attempt_back_merge(): `rq` grows by `sectors` at its end (mq-deadline also
  // repositions it in the back-merge hash).
  virtual void GrowBack(SchedRequest& rq, uint32_t sectors) { rq.sectors += sectors; }
};

}  // namespace blkbench::engine

#endif  // BLKBENCH_ENGINE_SCHED_ELEVATOR_H_
