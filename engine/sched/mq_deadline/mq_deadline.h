// MqDeadline: a standalone model of block/mq-deadline.c — priority levels, sector-sorted
// trees, FIFOs, batching, write starvation, expiry, prio aging, async_depth and merging.
#ifndef BLKBENCH_ENGINE_SCHED_MQ_DEADLINE_H_
#define BLKBENCH_ENGINE_SCHED_MQ_DEADLINE_H_

#include <array>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "engine/sched/elevator.h"
#include "engine/sched/elevator_type.h"
#include "engine/sched/flat_map.h"
#include "engine/sched/rq_hash.h"

namespace blkbench::engine {

// Tunable defaults (block/mq-deadline.c, top of file), in simulated ns.
inline constexpr uint64_t kDdReadExpireNs = 500 * kNsPerMs;          // read_expire = HZ / 2
inline constexpr uint64_t kDdWriteExpireNs = 5'000 * kNsPerMs;       // write_expire = 5 * HZ
inline constexpr uint64_t kDdPrioAgingExpireNs = 10'000 * kNsPerMs;  // prio_aging_expire = 10 * HZ
inline constexpr int kDdWritesStarved = 2;  // max times reads can starve a write
inline constexpr int kDdFifoBatch = 16;     // requests per sequential batch
inline constexpr bool kDdFrontMerges = true;

// How async_depth is derived from nr_requests (dd_depth_updated()).
enum class DdAsyncDepthRule : uint8_t {
  kNone,                  // < 5.14: no limit_depth hook
  kThreeQuartersPerWord,  // 5.14–6.9: max(1, 3 * nr_requests / 4), applied per sbitmap word
  kNrRequests,            // 6.10+: nr_requests
};

// Era behaviours of mq-deadline, selected by a kernel profile.
struct DeadlineProfile {
  bool prio_levels = true;        // 5.14+: RT/BE/IDLE levels (else everything is BE)
  bool prio_aging = true;         // ~6.0+: dd_dispatch_prio_aged_requests()
  bool latest_pos_cursor = true;  // 6.5+: latest_pos; before: per-direction next_rq
  DdAsyncDepthRule async_depth = DdAsyncDepthRule::kNrRequests;
  // Patch flags (off in every released kernel; KernelSpec):
  bool batch_dispatch = false;      // dd-batch-dispatch (seed 000, Yu Kuai 2025)
  bool serialize_dispatch = false;  // dd-serialize-dispatch: DD_DISPATCHING (seed 002)
  bool insert_lists = false;        // dd-insert-lists: staged insertion lists (seed 002)

  // The behaviours of kernel major.minor.
  static DeadlineProfile ForKernel(int major, int minor);
};

struct DeadlineTunables {
  uint64_t read_expire_ns = kDdReadExpireNs;
  uint64_t write_expire_ns = kDdWriteExpireNs;
  int writes_starved = kDdWritesStarved;
  int fifo_batch = kDdFifoBatch;
  bool front_merges = kDdFrontMerges;
  uint64_t prio_aging_expire_ns = kDdPrioAgingExpireNs;
  // The async_depth attribute (5.14+): 0 keeps what dd_depth_updated() derives from
  // nr_requests; a value replaces dd->async_depth after it, as a sysfs write does.
  uint32_t async_depth = 0;
};

inline constexpr int kDdNumPrios = 3;  // DD_RT_PRIO, DD_BE_PRIO, DD_IDLE_PRIO

class MqDeadline final : public Elevator {
 public:
  // Per-level stats (struct io_stats_per_prio).
  struct PrioStats {
    uint64_t inserted = 0;
    uint64_t merged = 0;
    uint64_t dispatched = 0;
    uint64_t completed = 0;
    uint64_t Queued() const { return inserted - completed; }  // dd_queued()
  };

  explicit MqDeadline(DeadlineProfile profile = {}, DeadlineTunables tunables = {});

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
  void FinishRequest(SchedRequest& rq) override;
  void PrepareRequest(SchedRequest& rq) override { rq_data_.Reset(rq); }
  std::optional<uint32_t> MinShallowDepth() const override;
  bool LimitDepthIsQueueWide() const override {
    return profile_.async_depth == DdAsyncDepthRule::kNrRequests;  // dd_to_word_depth()
  }
  int DispatchBatch() const override { return profile_.batch_dispatch ? kBatchDispatchMax : 1; }
  std::optional<uint64_t> DispatchingUntil(uint64_t now_ns) const override;
  void DispatchLockReleased(uint64_t release_ns) override;
  bool StagesInserts() const override { return profile_.insert_lists; }
  void StageRequests(std::span<SchedRequest* const> rqs) override;
  size_t staged() const override { return staged_.size(); }
  size_t SortStaged(uint64_t now_ns, std::vector<SchedRequest*>& freed) override;
  const ElevatorCounters& counters() const override { return counters_; }

  // dd->async_depth as computed by dd_depth_updated() (0 if the era has none).
  uint32_t async_depth() const { return async_depth_; }
  const PrioStats& prio_stats(int prio) const { return per_prio_[prio].stats; }
  uint64_t queued_requests() const { return queued_; }
  const DeadlineProfile& profile() const { return profile_; }
  const DeadlineTunables& tunables() const { return tunables_; }

 private:
  // rq->elv.priv[] and the request's place in the lists.
  struct DdRq {
    bool counted = false;  // priv[0]: counted in stats.inserted
    bool queued = false;   // in a sort tree / FIFO / dispatch list
    bool on_dispatch_list = false;
    bool hashed = false;       // ELV_ON_HASH()
    uint64_t seq = 0;          // insertion sequence: tie-break in the sort tree
    uint64_t fifo_seq = 0;     // position in the FIFO (list_move on merge copies it)
    uint64_t sort_sector = 0;  // the sector the request is filed under in the sort tree
    uint64_t hash_end = 0;     // the end sector it is filed under in the merge hash
  };
  DdRq& Priv(const SchedRequest& rq) { return rq_data_[rq]; }
  const DdRq& Priv(const SchedRequest& rq) const { return rq_data_[rq]; }

  static constexpr int kRead = 0;   // DD_READ
  static constexpr int kWrite = 1;  // DD_WRITE
  using SortKey = PairKey;          // (sector, seq): the rb-tree order
  using FifoKey = PairKey;          // (fifo_time, fifo_seq)

  // struct dd_per_prio.
  struct PerPrio {
    std::deque<SchedRequest*> dispatch;
    std::array<FlatMap<SortKey, SchedRequest*>, 2> sort_list;
    std::array<FlatMap<FifoKey, SchedRequest*>, 2> fifo_list;
    std::array<uint64_t, 2> latest_pos{};    // 6.5+
    std::array<SchedRequest*, 2> next_rq{};  // < 6.5
    PrioStats stats;
  };

  static int Dir(const SchedRequest& rq) { return rq.write ? kWrite : kRead; }
  int PrioOf(IoprioClass c) const;
  PerPrio& PrioFor(const SchedRequest& rq) { return per_prio_[PrioOf(rq.ioprio)]; }

  void InsertRequest(SchedRequest& rq, InsertFlags flags, uint64_t now_ns,
                     std::vector<SchedRequest*>& freed);
  bool TryInsertMerge(SchedRequest& rq, std::vector<SchedRequest*>& freed);
  void AddRqRb(PerPrio& pp, SchedRequest& rq);
  void DelRqRb(PerPrio& pp, SchedRequest& rq);
  void RemoveRequest(PerPrio& pp, SchedRequest& rq);
  void MoveRequest(PerPrio& pp, SchedRequest& rq);
  SchedRequest* LatterRequest(const SchedRequest& rq) const override;
  SchedRequest* FormerRequest(const SchedRequest& rq) const override;
  SchedRequest* NextRequest(PerPrio& pp, int dir) const;
  SchedRequest* FifoRequest(const PerPrio& pp, int dir) const;
  bool CheckFifo(const PerPrio& pp, int dir, uint64_t now_ns) const;
  SchedRequest* DispatchFromPrio(PerPrio& pp, uint64_t now_ns, int64_t latest_start_ns);
  SchedRequest* DispatchPrioAged(uint64_t now_ns);
  bool HasWorkForPrio(const PerPrio& pp) const;

  // Merge helpers (block/blk-merge.c, elevator.c).
  bool BioMergeOk(const SchedRequest& rq, const SchedBio& bio) const;
  bool RqMergeOk(const SchedRequest& rq, const SchedRequest& next) const override;
  SchedRequest* HashFind(uint64_t end_sector) const;
  void HashAdd(SchedRequest& rq);
  void HashDel(SchedRequest& rq);
  void MergeRequests(SchedRequest& rq, SchedRequest& next) override;
  void GrowBack(SchedRequest& rq, uint32_t sectors) override;

  DeadlineProfile profile_;
  DeadlineTunables tunables_;
  ElevatorQueueLimits limits_;
  uint32_t async_depth_ = 0;
  // What dd_depth_updated() gave sbitmap_queue_min_shallow_depth(): a later async_depth
  // write (the tunable) changes dd->async_depth but not the wake batch.
  uint32_t depth_updated_async_depth_ = 0;
  std::array<PerPrio, kDdNumPrios> per_prio_;
  // Queue-wide back-merge hash (q->elevator->hash): by end sector, then seq.
  RqHash<SchedRequest*> hash_;
  SchedRequest* last_merge_ = nullptr;  // q->last_merge
  int last_dir_ = kRead;                // dd->last_dir
  int batching_ = 0;                    // dd->batching
  unsigned starved_ = 0;                // dd->starved (unsigned, as writes_starved is compared)
  uint64_t next_seq_ = 1;
  uint64_t queued_ = 0;
  RequestData<DdRq> rq_data_;
  // dd-insert-lists: inserted under dd->insert_lock, sorted in at dispatch.
  std::vector<SchedRequest*> staged_, sorting_;
  // dd-serialize-dispatch: DD_DISPATCHING is set until this time (simulated ns).
  uint64_t dispatching_until_ = 0;
  ElevatorCounters counters_;
};

// The registry's entry (struct elevator_type mq_deadline): the factory builds the kernel
// era's mq-deadline with seed 000's and 002's patches and the cell's deadline_attrs[].
const ElevatorType& MqDeadlineType();

}  // namespace blkbench::engine

#endif  // BLKBENCH_ENGINE_SCHED_MQ_DEADLINE_H_
