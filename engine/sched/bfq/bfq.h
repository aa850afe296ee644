// Bfq: a standalone model of block/bfq-iosched.c — per-process queues, weights, budgets
// in sectors, B-WF2Q+ over a root → groups → queues hierarchy, idling and injection.
//
// Not modelled (say so before drawing conclusions from a run):
// - low_latency weight raising (interactive / soft real-time; wr_coeff is always 1) and
//   large-burst detection: run the kernel side with low_latency=0 to compare;
// - queue merging of cooperating queues (close sequential I/O; bfq_setup_cooperator),
//   the tentative stable merge of rotational or non-queueing devices (only the early
//   one of a non-rotational queueing device is), waker/woken detection, async-queue
//   injection of the in-service process's own writes;
// - peak-rate estimation and max_budget auto-tuning (max_budget stays at its tunable),
//   hw_tag detection (a device fact from Init), the idle-class starvation timeout,
//   bfqq_request_over_limit()'s per-entity tag cap, weight/ioprio changes at run time,
//   multi-actuator drives; deeper cgroup hierarchies than root → groups → queues;
// - group entities are extracted from the root tree while in service and are not
//   repositioned when a child changes mid-service (the kernel repositions them).
#ifndef BLKBENCH_ENGINE_SCHED_BFQ_H_
#define BLKBENCH_ENGINE_SCHED_BFQ_H_

#include <array>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "engine/sched/bfq/bfq_wf2q.h"
#include "engine/sched/elevator.h"
#include "engine/sched/elevator_type.h"
#include "engine/sched/flat_map.h"

namespace blkbench::engine {

// Tunable defaults (block/bfq-iosched.c, top of file), in simulated ns and sectors.
inline constexpr uint64_t kBfqSliceIdleNs = 8 * kNsPerMs;          // bfq_slice_idle = HZ/125
inline constexpr uint64_t kBfqMinTtNs = 2 * kNsPerMs;              // BFQ_MIN_TT
inline constexpr uint64_t kBfqTimeoutNs = 125 * kNsPerMs;          // bfq_timeout = HZ/8
inline constexpr uint64_t kBfqFifoExpireSyncNs = 125 * kNsPerMs;   // bfq_fifo_expire[1]
inline constexpr uint64_t kBfqFifoExpireAsyncNs = 250 * kNsPerMs;  // bfq_fifo_expire[0]
inline constexpr int64_t kBfqDefaultMaxBudget = 16 * 1024;         // sectors
inline constexpr int kBfqAsyncChargeFactor = 3;
inline constexpr uint32_t kBfqDefaultGroupWeight = 100;  // io.bfq.weight, range 1..1000
inline constexpr uint32_t kBfqWeightCoeff = 10;          // BFQ_WEIGHT_CONVERSION_COEFF
// bfq_do_or_sched_stable_merge(): a sync queue created within the burst interval of the
// group's last_bfqq_created is merged into it; one older than the activation window is
// replaced as the merge target.
inline constexpr uint64_t kBfqBurstIntervalNs = 180 * kNsPerMs;  // bfq_burst_interval
inline constexpr uint64_t kBfqActivationStableMergingNs =
    600 * kNsPerMs;  // bfq_activation_stable_merging

// Era behaviours of bfq, selected by a kernel profile.
struct BfqProfile {
  // bfq_asymmetric_scenario() idles when num_groups_with_pending_reqs exceeds this:
  // 0 before 6.2 (only non-root groups are counted: one busy cgroup forces idling), 1
  // from 6.2 (the root group is counted too; one busy group alone does not).
  uint32_t groups_with_pending_threshold = 1;
  // Patch flag "bfq-one-group-no-idle" (Yu Kuai 2021): the 6.2 rule on an older profile.
  bool one_group_no_idle = false;
  bool injection = true;  // 5.2+: I/O injection while dispatching is plugged
  // Patch flag "bfq-batch-dispatch" (seed 000): several dispatch_request per lock hold.
  bool batch_dispatch = false;
  // 5.13+: stable merging of queues created in a burst (bfq_do_or_sched_stable_merge).
  // Only the early merge of a non-rotational queueing device is modelled; on other
  // devices the kernel schedules a tentative merge, cancelled for sequential I/O.
  bool stable_merge = true;

  static BfqProfile ForKernel(int major, int minor);
  bool OneGroupRule() const { return one_group_no_idle || groups_with_pending_threshold >= 1; }
};

struct BfqTunables {
  uint64_t slice_idle_ns = kBfqSliceIdleNs;
  uint64_t timeout_ns = kBfqTimeoutNs;  // timeout_sync
  int64_t max_budget = kBfqDefaultMaxBudget;
  uint64_t fifo_expire_sync_ns = kBfqFifoExpireSyncNs;
  uint64_t fifo_expire_async_ns = kBfqFifoExpireAsyncNs;
  uint64_t back_seek_max_kib = 16 * 1024;  // bfq_back_max
  uint64_t back_seek_penalty = 2;
  // io.bfq.weight of cgroup g at [g] (g >= 1; [0], the root, is unused). Groups without
  // an entry get kBfqDefaultGroupWeight.
  std::vector<uint32_t> group_weights;
};

// enum bfqq_expiration.
enum class BfqExpireReason : uint8_t {
  kTooIdle,
  kBudgetTimeout,
  kBudgetExhausted,
  kNoMoreRequests,
  kPreempted,
};
inline constexpr int kBfqNumExpireReasons = 5;

struct BfqStats {
  std::array<uint64_t, kBfqNumExpireReasons> expirations{};
  uint64_t idle_timer_armed = 0;
  uint64_t idle_timer_fired = 0;
  uint64_t injected = 0;                // dispatched from a queue other than the in-service one
  uint64_t plugged_nulls = 0;           // dispatch returned nothing while the queue was kept
  std::vector<uint64_t> group_sectors;  // sectors dispatched per group
};

class Bfq final : public Elevator {
 public:
  explicit Bfq(BfqProfile profile = {}, BfqTunables tunables = {});
  ~Bfq() override;

  absl::Status Init(const ElevatorQueueLimits& limits) override;
  absl::Status Exit() override;
  BioMergeResult BioMerge(const SchedBio& bio) override;
  void RequestMerged(SchedRequest& rq, MergeType type) override;
  void RequestsMerged(SchedRequest& rq, SchedRequest& next) override;
  std::optional<uint32_t> LimitDepth(bool write, bool sync) const override;
  void InsertRequests(std::span<SchedRequest* const> rqs, InsertFlags flags, uint64_t now_ns,
                      std::vector<SchedRequest*>& freed) override;
  SchedRequest* DispatchRequest(uint64_t now_ns) override;
  bool HasWork() const override;
  bool MayDispatch(uint32_t hctx, uint64_t now_ns) const override;
  void FinishRequest(SchedRequest& rq) override;
  void CompletedRequest(SchedRequest& rq, uint64_t now_ns) override;
  void RequeueRequest(SchedRequest& rq) override;
  bool LockOnCompletion() const override { return true; }
  void PrepareRequest(SchedRequest& rq) override { rq_data_.Reset(rq); }
  int DispatchBatch() const override { return profile_.batch_dispatch ? kBatchDispatchMax : 1; }
  uint64_t TimerDeadline() const override { return idle_timer_ns_; }
  void TimerExpired(uint64_t now_ns) override;
  void TakeRunRequests(std::vector<uint32_t>& hctxs) override;
  const ElevatorCounters& counters() const override { return counters_; }

  const BfqStats& stats() const { return stats_; }
  const BfqProfile& profile() const { return profile_; }
  // ioc of the in-service queue, or nullopt (tests and internals export).
  std::optional<uint32_t> in_service_ioc() const;
  uint32_t busy_queues() const;
  uint32_t groups_with_pending_reqs() const;  // as bfq_asymmetric_scenario() counts them
  uint32_t rq_in_driver() const { return tot_rq_in_driver_; }

 private:
  struct Queue;
  struct Group;
  using Key = PairKey;  // (sector or fifo time, seq)
  // rq->elv.priv[] (RQ_BFQQ) and the request's place in its queue's lists.
  struct BfqRq {
    bool counted = false;  // counted in counters_.inserted
    bool queued = false;   // in its queue's sort list / FIFO, or on dispatch_
    bool on_dispatch_list = false;
    bool started = false;      // handed to the driver by DispatchRequest (RQF_STARTED)
    uint32_t queue = 0;        // index + 1 of its bfq_queue (RQ_BFQQ), 0 = none
    uint64_t seq = 0;          // insertion sequence: tie-break in the sort list
    uint64_t fifo_seq = 0;     // position in the FIFO (list_move on merge copies it)
    uint64_t sort_sector = 0;  // the sector it is filed under in the sort list
  };
  BfqRq& Priv(const SchedRequest& rq) { return rq_data_[rq]; }
  const BfqRq& Priv(const SchedRequest& rq) const { return rq_data_[rq]; }

  // bfq.cc: queues, groups, insertion, merging, dispatch, expiration.
  Group& GroupAt(uint32_t index);
  Queue& QueueFor(const SchedRequest& rq, uint64_t now_ns);
  Queue* StableMergeTarget(Group& g, IoprioClass cls, uint32_t level, uint64_t now_ns);
  Queue* QueueOf(const SchedRequest& rq) const;
  Queue* BioQueue(const SchedBio& bio) const;
  void InsertRequest(SchedRequest& rq, InsertFlags flags, uint64_t now_ns,
                     std::vector<SchedRequest*>& freed);
  bool TryInsertMerge(Queue& q, SchedRequest& rq, std::vector<SchedRequest*>& freed);
  void AddRequest(Queue& q, SchedRequest& rq, uint64_t now_ns);
  void RemoveRequest(SchedRequest& rq);
  SchedRequest* ChooseReq(SchedRequest* rq1, SchedRequest* rq2, uint64_t last) const;
  SchedRequest* FindNextRq(Queue& q, SchedRequest& last, uint64_t now_ns);
  void UpdatedNextReq(Queue& q);
  int64_t ServToCharge(const SchedRequest& rq, const Queue& q) const;
  void AddBusy(Queue& q);
  void DelBusy(Queue& q, bool expiration);
  void ActivateRequeueQueue(Queue& q, bool non_blocking_wait_rq, bool expiration);
  void DeactivateQueue(Queue& q, bool expiration);
  void SetGroupBudget(Group& g, bool expiration);
  void SetInService(Queue& q, uint64_t now_ns);
  bool HigherClassOrWeight(const Queue& q, const Queue& in_serv) const;
  uint32_t BusyTotal() const;
  Queue* GetNextQueue(uint64_t now_ns);
  Queue* SelectQueue(uint64_t now_ns);
  SchedRequest* DispatchFromQueue(Queue& q, uint64_t now_ns);
  void Expire(Queue& q, bool compensate, BfqExpireReason reason, uint64_t now_ns);
  void RecalcBudget(Queue& q, BfqExpireReason reason);
  void ResetInService();
  bool UpdateBudgetForActivation(Queue& q, bool arrived_in_time);
  void HandleIdleBusySwitch(Queue& q, uint64_t now_ns);
  bool MergeOk(const SchedRequest& rq, const SchedBio& bio) const;
  bool RqMergeOk(const SchedRequest& rq, const SchedRequest& next) const override;
  void MergeRequests(SchedRequest& rq, SchedRequest& next) override;
  SchedRequest* LatterRequest(const SchedRequest& rq) const override;
  SchedRequest* FormerRequest(const SchedRequest& rq) const override;

  // bfq_idle.cc: idling decisions, injection, think time, completion, the timer.
  bool AsymmetricScenario(const Queue* q) const;
  bool IdlingBoostsThr(const Queue& q) const;
  bool IdlingNeededForGuarantees(const Queue& q) const;
  bool BetterToIdle(const Queue& q) const;
  bool MustIdle(const Queue& q) const;
  bool BudgetTimeout(const Queue& q, uint64_t now_ns) const;
  bool MayExpireForBudgetTimeout(const Queue& q, uint64_t now_ns) const;
  Queue* InjectionCandidate(uint64_t now_ns) const;
  void ArmSliceTimer(uint64_t now_ns);
  void ResetInjectLimit(Queue& q, uint64_t now_ns);
  void UpdateInjectLimit(Queue& q, uint64_t now_ns);
  void UpdateThinkTime(Queue& q, uint64_t now_ns);
  void UpdateHasShortTtime(Queue& q, uint64_t now_ns);
  void UpdateSeekTime(Queue& q, const SchedRequest& rq);
  void UpdateIoIntensity(Queue& q, uint64_t now_ns);
  void RqEnqueued(Queue& q, const SchedRequest& rq, uint64_t now_ns);
  bool IsSlow(const Queue& q, bool compensate, uint64_t now_ns, uint64_t* delta_ms) const;
  void ChargeTime(Queue& q, uint64_t time_ms);
  void CompletedBody(Queue& q, uint64_t now_ns);
  void MarkPending(Queue& q, bool pending);

  BfqProfile profile_;
  BfqTunables tunables_;
  ElevatorQueueLimits limits_;
  uint32_t word_depth_ = 64;  // 1 << sched_tags sbitmap shift

  std::vector<std::unique_ptr<Group>> groups_;  // [0] is the root group
  std::vector<std::unique_ptr<Queue>> queues_;  // BfqRq::queue = index + 1
  std::map<std::tuple<uint32_t, uint32_t, uint32_t>, uint32_t> queue_index_;
  std::unordered_map<uint32_t, uint32_t> ioc_requests_;  // RQ_BIC(rq)->requests
  std::map<uint32_t, uint32_t> weight_counts_;           // queue_weights_tree
  std::deque<SchedRequest*> dispatch_;                   // bfqd->dispatch (at-head inserts)

  Queue* in_service_ = nullptr;
  std::array<uint32_t, bfq::kNumClasses> busy_per_class_{};
  uint32_t groups_with_pending_ = 0;  // non-root groups with pending queues
  uint32_t tot_rq_in_driver_ = 0;
  uint32_t max_rq_in_driver_ = 0;
  uint64_t queued_ = 0;  // requests in sort lists (bfqd->queued)
  uint64_t last_position_ = 0;
  uint64_t last_budget_start_ns_ = 0;
  uint64_t last_idling_start_ns_ = 0;
  uint64_t last_empty_occupied_ns_ = 0;
  bool wait_dispatch_ = false;
  bool rqs_injected_ = false;
  SchedRequest* waited_rq_ = nullptr;
  uint64_t idle_timer_ns_ = kNoTimer;
  bool run_requested_ = false;
  uint64_t last_now_ns_ = 0;
  uint64_t next_seq_ = 1;
  uint64_t tree_clock_ = 0;  // bfq::ServiceTree::clock for every tree
  RequestData<BfqRq> rq_data_;
  ElevatorCounters counters_;
  BfqStats stats_;
};

// The registry's entry (struct elevator_type iosched_bfq_mq): the factory builds the
// kernel era's bfq with seed 004's patches, the cell's cgroup weights and bfq_attrs[].
const ElevatorType& BfqType();

}  // namespace blkbench::engine

#endif  // BLKBENCH_ENGINE_SCHED_BFQ_H_
