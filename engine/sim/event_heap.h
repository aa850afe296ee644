// Queues of event keys (time, sequence, node index) packed into 16 bytes: a d-ary
// min-heap, a sorted vector, and EventQueue over both. Simulator uses EventQueue (a sorted vector,
// or a 4-ary heap when long); bench_event_queue compares them.
#ifndef BLKBENCH_ENGINE_SIM_EVENT_HEAP_H_
#define BLKBENCH_ENGINE_SIM_EVENT_HEAP_H_

#include <algorithm>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "engine/sim/time.h"

namespace blkbench::engine {

// One heap entry. `order` packs the scheduling sequence number (high 40 bits) and the
// event node index (low 24 bits), so comparing (time, order) lexicographically orders
// events by (time, sequence) — the sequence is unique, the node index never decides.
struct EventKey {
  SimTime time;
  uint64_t order;

  static constexpr int kNodeBits = 24;
  static constexpr uint64_t kMaxNodes = uint64_t{1} << kNodeBits;
  static constexpr uint64_t kMaxSequence = uint64_t{1} << (64 - kNodeBits);

  uint32_t node() const { return static_cast<uint32_t>(order & (kMaxNodes - 1)); }
  uint64_t sequence() const { return order >> kNodeBits; }
  // (time, order) as one 128-bit number: no branch, so a queue's bisection does not
  // mispredict on every level.
  // By value, not through a member function: taking the key's address made GCC spill a
  // pushed key and reload it as one 16-byte register (a failed store-to-load forward).
  friend bool operator<(EventKey a, EventKey b) {
    return ((static_cast<unsigned __int128>(a.time) << 64) | a.order) <
           ((static_cast<unsigned __int128>(b.time) << 64) | b.order);
  }
};

// Min-heap with `Arity` children per node. Not thread-safe. Storage grows to the
// high-water mark and is then reused, so steady-state Push/Pop never allocate.
template <int Arity>
class EventHeap {
  static_assert(Arity >= 2);

 public:
  bool empty() const { return keys_.empty(); }
  size_t size() const { return keys_.size(); }
  const EventKey& top() const {
    assert(!keys_.empty());
    return keys_.front();
  }
  void reserve(size_t n) { keys_.reserve(n); }
  void clear() { keys_.clear(); }

  void Push(EventKey key) {
    keys_.push_back(key);
    SiftUp(keys_.size() - 1);
  }

  // REQUIRES: !empty().
  EventKey Pop() {
    assert(!keys_.empty());
    EventKey result = keys_.front();
    EventKey last = keys_.back();
    keys_.pop_back();
    if (!keys_.empty()) SiftDown(0, last);
    return result;
  }

  // Replaces the contents with `keys` in any order (O(n)); TakeKeys empties the heap.
  void Assign(std::vector<EventKey> keys) {
    keys_ = std::move(keys);
    Heapify();
  }
  std::vector<EventKey> TakeKeys() { return std::exchange(keys_, {}); }

  // Keeps only the keys for which keep(key) is true, then restores the heap in O(n).
  template <typename Pred>
  void Filter(Pred keep) {
    size_t out = 0;
    for (const EventKey& key : keys_) {  // out never passes the key being read
      if (keep(key)) keys_[out++] = key;
    }
    keys_.resize(out);
    Heapify();
  }

 private:
  void Heapify() {
    const size_t n = keys_.size();
    if (n < 2) return;
    for (size_t i = (n - 2) / Arity + 1; i-- > 0;) SiftDown(i, keys_[i]);
  }

  void SiftUp(size_t i) {
    EventKey key = keys_[i];
    while (i > 0) {
      size_t parent = (i - 1) / Arity;
      if (!(key < keys_[parent])) break;
      keys_[i] = keys_[parent];
      i = parent;
    }
    keys_[i] = key;
  }

  // Places `key` at hole `i` or below it.
  void SiftDown(size_t i, EventKey key) {
    const size_t n = keys_.size();
    for (;;) {
      size_t first = i * Arity + 1;
      if (first >= n) break;
      size_t best = first;
      size_t end = first + Arity < n ? first + Arity : n;
      for (size_t c = first + 1; c < end; ++c) {
        if (keys_[c] < keys_[best]) best = c;
      }
      if (!(keys_[best] < key)) break;
      keys_[i] = keys_[best];
      i = best;
    }
    keys_[i] = key;
  }

  std::vector<EventKey> keys_;
};

// The same interface over a vector kept sorted earliest-first from a moving head: Pop
// advances the head (O(1)); Push looks for its place from the back, where a simulated
// machine's new events go (in engine_bench ~93 % are the latest or second latest of the
// tens pending), and moves only the keys due after it; a long search from the back turns
// to bisection. The consumed prefix is dropped once it is as long as the live part, so
// that costs O(1) per pop amortised. Filter keeps the order. A push into the middle of a
// long queue costs O(n) moves, which is why EventQueue turns to the heap there;
// bench_event_queue compares them.
class SortedEventQueue {
 public:
  bool empty() const { return head_ == keys_.size(); }
  size_t size() const { return keys_.size() - head_; }
  const EventKey& top() const {
    assert(!empty());
    return keys_[head_];
  }
  void reserve(size_t n) { keys_.reserve(n); }
  void clear() {
    keys_.clear();
    head_ = 0;
  }

  void Push(EventKey key) {
    if (head_ >= kMinDrop && head_ >= size()) DropConsumed();
    // The first position (from head_) whose key is later than `key`: a few steps back
    // from the end, then bisection of what is left.
    size_t hi = keys_.size();
    const size_t stop = hi - std::min(size(), kBackSteps);
    while (hi > stop && key < keys_[hi - 1]) --hi;
    if (hi == stop && hi > head_) {
      size_t lo = head_;
      while (lo < hi) {
        const size_t mid = lo + (hi - lo) / 2;
        if (key < keys_[mid]) {
          hi = mid;
        } else {
          lo = mid + 1;
        }
      }
    }
    // Room at `hi`, then the key stored field by field with a compiler barrier between:
    // GCC otherwise merges the stores into one 16-byte store and, to have that register,
    // spills the two 8-byte halves of `key` on entry and reloads them as one 16-byte
    // value, a failed store-to-load forward that stalled every push (most of Push's time
    // in engine_bench's perf profile).
    keys_.emplace_back();
    std::copy_backward(keys_.begin() + static_cast<std::ptrdiff_t>(hi), keys_.end() - 1,
                       keys_.end());
    keys_[hi].time = key.time;
    asm volatile("" ::: "memory");
    keys_[hi].order = key.order;
  }

  // REQUIRES: !empty().
  EventKey Pop() {
    assert(!empty());
    const EventKey result = keys_[head_++];
    if (head_ == keys_.size()) clear();
    return result;
  }

  void Assign(std::vector<EventKey> keys) {
    keys_ = std::move(keys);
    head_ = 0;
    std::sort(keys_.begin(), keys_.end());
  }
  std::vector<EventKey> TakeKeys() {
    DropConsumed();
    return std::exchange(keys_, {});
  }

  template <typename Pred>
  void Filter(Pred keep) {
    size_t out = 0;
    for (size_t i = head_; i < keys_.size(); ++i) {
      if (keep(keys_[i])) keys_[out++] = keys_[i];
    }
    keys_.resize(out);
    head_ = 0;
  }

 private:
  static constexpr size_t kBackSteps = 4;
  static constexpr size_t kMinDrop = 32;  // fewer consumed keys are not worth a move

  void DropConsumed() {
    keys_.erase(keys_.begin(), keys_.begin() + static_cast<std::ptrdiff_t>(head_));
    head_ = 0;
  }

  std::vector<EventKey> keys_;  // keys_[head_..] earliest first; the ones before are consumed
  size_t head_ = 0;
};

// The simulator's queue: the sorted vector while few events are pending (the usual
// case: tens), the 4-ary heap once more are (thousands of timers or requests in flight
// would make every sorted push an O(n) move). Both pop in (time, order), so switching
// changes nothing a run can see; the gap between the two thresholds keeps a queue near
// one of them from switching back and forth.
class EventQueue {
 public:
  static constexpr size_t kToHeap = 512;
  static constexpr size_t kToSorted = 128;

  bool empty() const { return heap_mode_ ? heap_.empty() : sorted_.empty(); }
  size_t size() const { return heap_mode_ ? heap_.size() : sorted_.size(); }
  const EventKey& top() const { return heap_mode_ ? heap_.top() : sorted_.top(); }
  bool heap_mode() const { return heap_mode_; }
  void reserve(size_t n) {
    heap_.reserve(n);
    sorted_.reserve(n);
  }

  void Push(EventKey key) {
    if (heap_mode_) {
      heap_.Push(key);
      return;
    }
    sorted_.Push(key);
    if (sorted_.size() > kToHeap) {
      heap_.Assign(sorted_.TakeKeys());
      heap_mode_ = true;
    }
  }

  EventKey Pop() {
    if (!heap_mode_) return sorted_.Pop();
    const EventKey key = heap_.Pop();
    if (heap_.size() < kToSorted) {
      sorted_.Assign(heap_.TakeKeys());
      heap_mode_ = false;
    }
    return key;
  }

  template <typename Pred>
  void Filter(Pred keep) {
    if (heap_mode_) {
      heap_.Filter(keep);
    } else {
      sorted_.Filter(keep);
    }
  }

 private:
  bool heap_mode_ = false;
  SortedEventQueue sorted_;
  EventHeap<4> heap_;
};

}  // namespace blkbench::engine

#endif  // BLKBENCH_ENGINE_SIM_EVENT_HEAP_H_
