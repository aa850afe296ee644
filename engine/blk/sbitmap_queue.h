// SbitmapQueue: a deterministic model of struct sbitmap_queue (lib/sbitmap.c): tag
// get/free on an Sbitmap plus the 8 wait queues and the era-specific wake-up rules.
#ifndef BLKBENCH_ENGINE_BLK_SBITMAP_QUEUE_H_
#define BLKBENCH_ENGINE_BLK_SBITMAP_QUEUE_H_

#include <array>
#include <cstdint>
#include <deque>
#include <span>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "engine/blk/sbitmap.h"

namespace blkbench::engine {

inline constexpr int kSbqWaitQueues = 8;  // SBQ_WAIT_QUEUES
inline constexpr int kSbqWakeBatch = 8;   // SBQ_WAKE_BATCH

// Which kernel's sbitmap_queue_wake_up() is modelled.
enum class WakeScheme {
  // <= 6.1 (the code of 5.18, seed 001): each free decrements the wait_cnt of the first
  // active waitqueue from wake_index; at 0 it wakes wake_batch waiters there, resets the
  // count and advances wake_index (__sbq_wake_up / sbq_wake_ptr).
  kPerQueueCountdown,
  // 6.2-6.4: one queue-wide completion_cnt; every wake_batch completions wake up to
  // wake_batch waiters on the first active queue from wake_index (advanced past it).
  kQueueWide,
  // 6.5+: as kQueueWide, but a queue that runs short passes the rest of the batch on to
  // the next active queues (__sbitmap_queue_wake_up: `nr -= woken`).
  kQueueWideSpill,
};

// Batch allocation of a plug's nr_ios tags.
enum class BatchMode {
  kSinglePass,  // 5.16-6.18: one __sbitmap_queue_get_batch() call.
  kMultiPass,   // 6.19 (Xue He): retry for the remainder until satisfied or none left.
};

using WaiterId = uint64_t;

// hctx->wait_index: the caller-owned round-robin cursor of sbq_wait_ptr().
struct WaitIndex {
  unsigned value = 0;
};

struct SbitmapQueueOptions {
  SbitmapOptions sbitmap;
  WakeScheme wake_scheme = WakeScheme::kQueueWideSpill;
  BatchMode batch_mode = BatchMode::kSinglePass;
  // Seed 001 patch "sbitmap: wake up the number of threads based on required tags": a
  // waiter needing k tags uses k of the wake budget (get_wake_nr()). As the series'
  // patch 5 leaves it, a pre-6.2 wake whose queue's waiters need less than the batch
  // also wakes one waiter of every queue (sbitmap_queue_wake_all).
  bool wake_by_tags = false;
};

// Waiters woken by one free: at most wake_batch (<= 8), plus one per waitqueue when a
// wake-by-tags wake falls back to sbitmap_queue_wake_all.
struct WokenList {
  std::array<WaiterId, kSbqWakeBatch + kSbqWaitQueues> ids{};
  int size = 0;
  const WaiterId* begin() const { return ids.data(); }
  const WaiterId* end() const { return ids.data() + size; }
  bool empty() const { return size == 0; }
};

// Tags obtained by a batch allocation (possibly fewer than requested).
struct BatchTags {
  std::array<int, kBitsPerLong> tags{};
  int size = 0;
  int passes = 0;  // __sbitmap_queue_get_batch() calls that returned bits.
  const int* begin() const { return tags.data(); }
  const int* end() const { return tags.data() + size; }
};

struct SbqStats {
  uint64_t gets = 0;                  // Single Get/GetShallow calls.
  uint64_t gets_failed = 0;           // ... that found no free bit.
  uint64_t batch_calls = 0;           // GetBatchTags calls.
  uint64_t batch_failed = 0;          // ... that obtained nothing.
  uint64_t batch_tags_requested = 0;  // Sum of nr_tags asked for.
  uint64_t batch_tags_obtained = 0;   // Sum of tags actually obtained.
  uint64_t batch_passes = 0;          // Successful single-pass window grabs.
  uint64_t frees = 0;                 // Tags freed (Clear and ClearBatch).
  uint64_t waits = 0;                 // Wait() calls.
  uint64_t wakeups = 0;               // Wake events that woke at least one waiter.
  uint64_t woken = 0;                 // Waiters woken.
};

// Not thread-safe; deterministic: the same calls give the same results.
class SbitmapQueue {
 public:
  // Mirrors sbitmap_queue_init_node(): min_shallow_depth = UINT_MAX, wake_batch from
  // the depth, every wait_cnt = wake_batch. Errors as Sbitmap::Create().
  static absl::StatusOr<SbitmapQueue> Create(unsigned depth, const SbitmapQueueOptions& options);

  // Mirrors sbq_calc_wake_batch(): clamp(effective depth / 8, 1, 8). Per-word shallow
  // maps count at most min_shallow_depth bits per word; whole-bitmap maps (6.17+) use
  // min(depth, min_shallow_depth).
  static unsigned CalcWakeBatch(const Sbitmap& sb, unsigned min_shallow_depth);

  // Mirrors sbitmap_queue_min_shallow_depth(): recomputes wake_batch; in the
  // countdown scheme a change resets every wait_cnt to 1, as the kernel did.
  void SetMinShallowDepth(unsigned min_shallow_depth);

  // __sbitmap_queue_get(): a free tag or -1. Never looks at waiters ("preemption").
  int Get(int cpu);
  // sbitmap_queue_get_shallow(). REQUIRES: shallow_depth >= min_shallow_depth().
  int GetShallow(int cpu, unsigned shallow_depth);
  // One __sbitmap_queue_get_batch() pass: bitmask relative to *offset, 0 on failure.
  uint64_t GetBatch(int cpu, int nr_tags, unsigned* offset);
  // Batch allocation per BatchMode; the tags obtained (maybe fewer than nr_tags).
  // REQUIRES: 1 <= nr_tags <= 64.
  BatchTags GetBatchTags(int cpu, int nr_tags);

  // sbitmap_queue_clear(): deferred free of `tag`, one completion for the wake-up
  // accounting, then `cpu`'s hint = tag. Returns the waiters woken (now off their
  // waitqueue but still counted in ws_active until FinishWait()).
  WokenList Clear(unsigned tag, int cpu);
  // sbitmap_queue_clear_batch(): frees directly in the words, then the wake-up
  // accounting (one completion before 6.2, tags.size() after), hint = last tag.
  WokenList ClearBatch(std::span<const int> tags, int cpu);

  // sbq_wait_ptr(): the waitqueue to use now; advances the caller's cursor.
  static int WaitPtr(WaitIndex& wait_index);
  // sbitmap_prepare_to_wait(): appends an exclusive waiter needing `tags_needed` tags
  // (FIFO per queue). A woken waiter that has not called FinishWait() may wait again
  // without counting twice in ws_active. InvalidArgument for a bad ws or tags_needed;
  // FailedPrecondition if the waiter is already queued.
  absl::Status Wait(int ws, WaiterId id, int tags_needed = 1);
  // sbitmap_finish_wait(): leaves the waitqueue if still on it and stops counting in
  // ws_active. Call it once a woken waiter runs, or to give up. False if unknown.
  bool FinishWait(WaiterId id);
  bool CancelWait(WaiterId id) { return FinishWait(id); }

  // True if some waiter is queued: for the caller's "tag-no-preempt" policy.
  bool has_waiters() const { return queued_ != 0; }
  // Waiters on the waitqueues now (not yet woken).
  int queued() const { return queued_; }
  // Registered waiters (queued or woken but not finished) — sbq->ws_active.
  int ws_active() const { return static_cast<int>(waiters_.size()); }
  // Seed 001 patch "sbitmap: force tag preemption if free tags are sufficient": at each
  // wake-up, whether more than twice wake_batch tags were free (sbq->force_tag_preemption).
  bool force_tag_preemption() const { return force_tag_preemption_; }
  size_t waiters_in(int ws) const { return ws_[ws].size(); }

  unsigned wake_batch() const { return wake_batch_; }
  unsigned min_shallow_depth() const { return min_shallow_depth_; }
  unsigned wake_index() const { return wake_index_; }
  int wait_cnt(int ws) const { return wait_cnt_[ws]; }
  const SbitmapQueueOptions& options() const { return options_; }
  const Sbitmap& sbitmap() const { return sb_; }
  Sbitmap& mutable_sbitmap() { return sb_; }
  const SbqStats& stats() const { return stats_; }

 private:
  struct Entry {
    WaiterId id;
    int tags_needed;
  };

  explicit SbitmapQueue(Sbitmap sb) : sb_(std::move(sb)) {}

  void WakeUp(int nr, WokenList& out);
  void WakeUpCountdown(WokenList& out);
  void WakeUpQueues(int nr, WokenList& out);
  int WakePtr();
  int GetWakeNr(int ws, int budget, int* uncovered = nullptr) const;
  void WakeAll(WokenList& out);
  void UpdateForceTagPreemption();
  int WakeUpNr(int ws, int nr, int* tags_woken, WokenList& out);

  Sbitmap sb_;
  SbitmapQueueOptions options_;
  unsigned min_shallow_depth_ = 0;
  unsigned wake_batch_ = 1;
  unsigned wake_index_ = 0;
  std::array<int, kSbqWaitQueues> wait_cnt_{};  // Pre-6.2 per-queue countdowns.
  uint64_t completion_cnt_ = 0;                 // 6.2+ queue-wide counters.
  uint64_t wakeup_cnt_ = 0;
  std::array<std::deque<Entry>, kSbqWaitQueues> ws_;
  absl::flat_hash_map<WaiterId, int> waiters_;  // id -> queue index, -1 once woken.
  int queued_ = 0;
  bool force_tag_preemption_ = false;
  SbqStats stats_;
};

}  // namespace blkbench::engine

#endif  // BLKBENCH_ENGINE_BLK_SBITMAP_QUEUE_H_
