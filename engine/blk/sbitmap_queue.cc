// SbitmapQueue: tag get/free, wait queues and the three wake-up schemes, each piece
// mirroring the lib/sbitmap.c function of the kernel era named beside it.
#include "engine/blk/sbitmap_queue.h"

#include <algorithm>
#include <bit>
#include <cassert>
#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"

namespace blkbench::engine {
namespace {

constexpr unsigned kUintMax = std::numeric_limits<unsigned>::max();

int IndexInc(unsigned index) { return static_cast<int>((index + 1) % kSbqWaitQueues); }

void AppendMask(uint64_t mask, unsigned offset, BatchTags& out) {
  while (mask != 0) {
    out.tags[out.size++] = static_cast<int>(offset) + std::countr_zero(mask);
    mask &= mask - 1;
  }
}

}  // namespace

absl::StatusOr<SbitmapQueue> SbitmapQueue::Create(unsigned depth,
                                                  const SbitmapQueueOptions& options) {
  absl::StatusOr<Sbitmap> sb = Sbitmap::Create(depth, options.sbitmap);
  if (!sb.ok()) return sb.status();
  SbitmapQueue sbq(*std::move(sb));
  sbq.options_ = options;
  sbq.min_shallow_depth_ = kUintMax;
  sbq.wake_batch_ = CalcWakeBatch(sbq.sb_, kUintMax);
  sbq.wait_cnt_.fill(static_cast<int>(sbq.wake_batch_));
  return sbq;
}

unsigned SbitmapQueue::CalcWakeBatch(const Sbitmap& sb, unsigned min_shallow_depth) {
  unsigned depth = sb.depth();
  if (sb.shallow_mode() == ShallowMode::kWholeBitmap) {
    // 6.17+ sbq_calc_wake_batch(): min(depth, min_shallow_depth) / SBQ_WAIT_QUEUES.
    depth = std::min(depth, min_shallow_depth);
  } else {
    // Pre-6.17: every word may be limited to min_shallow_depth bits, so the bits that
    // can be in flight are (full words) * shallow + min(partial word, shallow).
    const unsigned shallow = std::min(sb.bits_per_word(), min_shallow_depth);
    depth = (depth >> sb.shift()) * shallow + std::min(depth & (sb.bits_per_word() - 1), shallow);
  }
  return std::clamp(depth / kSbqWaitQueues, 1u, static_cast<unsigned>(kSbqWakeBatch));
}

void SbitmapQueue::SetMinShallowDepth(unsigned min_shallow_depth) {
  min_shallow_depth_ = min_shallow_depth;
  const unsigned wake_batch = CalcWakeBatch(sb_, min_shallow_depth);
  if (wake_batch == wake_batch_) return;
  wake_batch_ = wake_batch;
  // Pre-6.2 __sbitmap_queue_update_wake_batch() forces the next free on each queue to
  // wake (wait_cnt = 1); 6.2+ only writes wake_batch.
  if (options_.wake_scheme == WakeScheme::kPerQueueCountdown) wait_cnt_.fill(1);
}

int SbitmapQueue::Get(int cpu) {
  ++stats_.gets;
  const int tag = sb_.Get(cpu);
  if (tag < 0) ++stats_.gets_failed;
  return tag;
}

int SbitmapQueue::GetShallow(int cpu, unsigned shallow_depth) {
  assert(shallow_depth >= min_shallow_depth_ || min_shallow_depth_ == kUintMax);
  ++stats_.gets;
  const int tag = sb_.GetShallow(cpu, shallow_depth);
  if (tag < 0) ++stats_.gets_failed;
  return tag;
}

uint64_t SbitmapQueue::GetBatch(int cpu, int nr_tags, unsigned* offset) {
  const uint64_t mask = sb_.GetBatch(cpu, nr_tags, offset);
  if (mask != 0) ++stats_.batch_passes;
  return mask;
}

BatchTags SbitmapQueue::GetBatchTags(int cpu, int nr_tags) {
  // kSinglePass is blk_mq_get_tags() as of 5.16-6.18: whatever one window yields; the
  // plug then allocates the rest one tag at a time. kMultiPass models 6.19's "plug
  // attempts to batch allocate tags multiple times" as an immediate retry for the
  // remainder. (The kernel patch retries lazily: plug->nr_ios keeps the remainder, so
  // the plug's next cache miss batch-allocates again — see PlugNrIosAfterAlloc().)
  assert(nr_tags >= 1 && nr_tags <= kBitsPerLong);
  BatchTags out;
  ++stats_.batch_calls;
  stats_.batch_tags_requested += static_cast<uint64_t>(nr_tags);
  int remaining = nr_tags;
  while (remaining > 0) {
    unsigned offset = 0;
    const uint64_t mask = GetBatch(cpu, remaining, &offset);
    if (mask == 0) break;
    AppendMask(mask, offset, out);
    ++out.passes;
    remaining = nr_tags - out.size;
    if (options_.batch_mode == BatchMode::kSinglePass) break;
  }
  stats_.batch_tags_obtained += static_cast<uint64_t>(out.size);
  if (out.size == 0) ++stats_.batch_failed;
  return out;
}

WokenList SbitmapQueue::Clear(unsigned tag, int cpu) {
  // sbitmap_queue_clear(): deferred clear, wake-up accounting, then the CPU hint.
  WokenList out;
  sb_.DeferredClearBit(tag);
  ++stats_.frees;
  WakeUp(1, out);
  sb_.UpdateCpuHint(cpu, tag);
  return out;
}

WokenList SbitmapQueue::ClearBatch(std::span<const int> tags, int cpu) {
  WokenList out;
  if (tags.empty()) return out;
  for (int tag : tags) sb_.ClearBitNow(static_cast<unsigned>(tag));
  stats_.frees += tags.size();
  // Before 6.1's "fix batched wait_cnt accounting", a batch counted as one completion.
  const bool one_completion = options_.wake_scheme == WakeScheme::kPerQueueCountdown;
  WakeUp(one_completion ? 1 : static_cast<int>(tags.size()), out);
  sb_.UpdateCpuHint(cpu, static_cast<unsigned>(tags.back()));
  return out;
}

int SbitmapQueue::WaitPtr(WaitIndex& wait_index) {
  const int ws = static_cast<int>(wait_index.value % kSbqWaitQueues);
  wait_index.value = static_cast<unsigned>(IndexInc(wait_index.value));
  return ws;
}

absl::Status SbitmapQueue::Wait(int ws, WaiterId id, int tags_needed) {
  if (ws < 0 || ws >= kSbqWaitQueues) {
    return absl::InvalidArgumentError(absl::StrCat("wait queue ", ws, " out of range"));
  }
  if (tags_needed < 1) {
    return absl::InvalidArgumentError(absl::StrCat("tags_needed ", tags_needed, " < 1"));
  }
  auto [it, inserted] = waiters_.try_emplace(id, ws);
  if (!inserted) {
    if (it->second >= 0) {
      return absl::FailedPreconditionError(absl::StrCat("waiter ", id, " is already queued"));
    }
    it->second = ws;  // Woken, not finished: sbq_wait->sbq is still set, no ws_active++.
  }
  ws_[ws].push_back(Entry{id, tags_needed});  // prepare_to_wait_exclusive(): tail.
  ++queued_;
  ++stats_.waits;
  return absl::OkStatus();
}

bool SbitmapQueue::FinishWait(WaiterId id) {
  auto it = waiters_.find(id);
  if (it == waiters_.end()) return false;
  if (it->second >= 0) {
    // Usually the newest entry (a get succeeded right after prepare_to_wait), so
    // search from the back.
    std::deque<Entry>& q = ws_[it->second];
    auto pos = std::find_if(q.rbegin(), q.rend(), [id](const Entry& e) { return e.id == id; });
    assert(pos != q.rend());
    q.erase(std::next(pos).base());
    --queued_;
  }
  waiters_.erase(it);
  return true;
}

void SbitmapQueue::WakeUp(int nr, WokenList& out) {
  if (options_.wake_scheme == WakeScheme::kPerQueueCountdown) {
    WakeUpCountdown(out);
    return;
  }
  // 6.2+ sbitmap_queue_wake_up(sbq, nr): completions only count while someone waits;
  // each call wakes at most one batch.
  if (waiters_.empty()) return;
  completion_cnt_ += static_cast<uint64_t>(nr);
  if (completion_cnt_ - wakeup_cnt_ < wake_batch_) return;
  wakeup_cnt_ += wake_batch_;
  UpdateForceTagPreemption();
  WakeUpQueues(static_cast<int>(wake_batch_), out);
}

int SbitmapQueue::WakePtr() {
  // sbq_wake_ptr(): the first active waitqueue from wake_index, which moves onto it.
  if (waiters_.empty()) return -1;
  unsigned index = wake_index_;
  for (int i = 0; i < kSbqWaitQueues; ++i) {
    if (!ws_[index].empty()) {
      wake_index_ = index;
      return static_cast<int>(index);
    }
    index = static_cast<unsigned>(IndexInc(index));
  }
  return -1;
}

void SbitmapQueue::WakeUpCountdown(WokenList& out) {
  // 5.18 __sbq_wake_up(): decrement the current queue's wait_cnt; at zero reset it,
  // advance wake_index and wake a batch on that queue. (The kernel's cmpxchg retry
  // loop only matters with concurrent wakers.)
  const int ws = WakePtr();
  if (ws < 0) return;
  if (--wait_cnt_[ws] > 0) return;
  wait_cnt_[ws] = static_cast<int>(wake_batch_);
  UpdateForceTagPreemption();
  wake_index_ = static_cast<unsigned>(IndexInc(wake_index_));
  const int batch = static_cast<int>(wake_batch_);
  int tags_woken = 0;
  if (!options_.wake_by_tags) {
    WakeUpNr(ws, batch, &tags_woken, out);
    return;
  }
  int uncovered = 0;
  WakeUpNr(ws, GetWakeNr(ws, batch, &uncovered), &tags_woken, out);
  if (uncovered > 0) WakeAll(out);
}

void SbitmapQueue::UpdateForceTagPreemption() {
  // Seed 001 patch 6, at every wake-up: more than twice wake_batch tags free.
  force_tag_preemption_ = sb_.depth() - sb_.Weight() > 2 * wake_batch_;
}

void SbitmapQueue::WakeAll(WokenList& out) {
  // sbitmap_queue_wake_all(): wake_up() on every active queue from wake_index, which
  // wakes one exclusive waiter each.
  unsigned index = wake_index_;
  for (int i = 0; i < kSbqWaitQueues; ++i) {
    const int ws = static_cast<int>(index);
    index = static_cast<unsigned>(IndexInc(index));
    int tags_woken = 0;
    if (!ws_[ws].empty()) WakeUpNr(ws, 1, &tags_woken, out);
  }
}

void SbitmapQueue::WakeUpQueues(int nr, WokenList& out) {
  // 6.2+ __sbitmap_queue_wake_up(): advance the index before trying each queue so one
  // queue need not drain before the next is served.
  if (waiters_.empty()) return;
  unsigned index = wake_index_;
  for (int i = 0; i < kSbqWaitQueues; ++i) {
    const int ws = static_cast<int>(index);
    index = static_cast<unsigned>(IndexInc(index));
    if (ws_[ws].empty()) continue;
    int tags_woken = 0;
    const int woken =
        WakeUpNr(ws, options_.wake_by_tags ? GetWakeNr(ws, nr) : nr, &tags_woken, out);
    if (options_.wake_scheme == WakeScheme::kQueueWide) {
      if (woken > 0) break;  // 6.2: waking at least one waiter is enough.
      continue;
    }
    // 6.5+: pass whatever this queue could not use on to the next queues.
    const int used = options_.wake_by_tags ? std::min(nr, tags_woken) : woken;
    if (used >= nr) break;
    nr -= used;
  }
  wake_index_ = index;
}

int SbitmapQueue::GetWakeNr(int ws, int budget, int* uncovered) const {
  // Seed 001 get_wake_nr(): waiters from the head until the next one's tags would
  // cover the rest of the budget; that waiter is woken too. *uncovered (if given): the
  // budget the queue's waiters do not cover (0 once one covers it).
  int nr = 1;
  int left = budget;
  for (const Entry& e : ws_[ws]) {
    if (left <= e.tags_needed) {
      left = 0;
      break;
    }
    ++nr;
    left -= e.tags_needed;
  }
  if (uncovered != nullptr) *uncovered = left;
  return nr;
}

int SbitmapQueue::WakeUpNr(int ws, int nr, int* tags_woken, WokenList& out) {
  // wake_up_nr() on exclusive waiters: the first nr, each removed from the queue by
  // autoremove_wake_function(). Every queued waiter is asleep, so each counts.
  std::deque<Entry>& q = ws_[ws];
  int woken = 0;
  while (woken < nr && !q.empty() && out.size < static_cast<int>(out.ids.size())) {
    const Entry e = q.front();
    q.pop_front();
    waiters_[e.id] = -1;
    --queued_;
    out.ids[out.size++] = e.id;
    *tags_woken += e.tags_needed;
    ++woken;
  }
  if (woken > 0) ++stats_.wakeups;
  stats_.woken += static_cast<uint64_t>(woken);
  return woken;
}

}  // namespace blkbench::engine
