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
  friend bool operator<(const EventKey& a, const EventKey& b) {
    return a.time < b.time || (a.time == b.time && a.order < b.order);
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

// The same interface over a vector kept sorted latest-first, so the next event is the
// last element: Pop is O(1), Push finds its place by bisection and moves the keys due
// before it (a simulated machine keeps tens of events pending, most new ones due soon).
// Filter keeps the order. A push costs O(n) moves on a long queue, which is why
// EventQueue turns to the heap there; bench_event_queue compares them.
class SortedEventQueue {
 public:
  bool empty() const { return keys_.empty(); }
  size_t size() const { return keys_.size(); }
  const EventKey& top() const {
    assert(!keys_.empty());
    return keys_.back();
  }
  void reserve(size_t n) { keys_.reserve(n); }
  void clear() { keys_.clear(); }

  void Push(EventKey key) {
    // The first position whose key is earlier than `key` (the keys are latest first).
    size_t lo = 0, hi = keys_.size();
    while (lo < hi) {
      const size_t mid = (lo + hi) / 2;
      if (keys_[mid] < key) {
        hi = mid;
      } else {
        lo = mid + 1;
      }
    }
    keys_.insert(keys_.begin() + static_cast<std::ptrdiff_t>(lo), key);
  }

  // REQUIRES: !empty().
  EventKey Pop() {
    assert(!keys_.empty());
    EventKey result = keys_.back();
    keys_.pop_back();
    return result;
  }

  void Assign(std::vector<EventKey> keys) {
    keys_ = std::move(keys);
    std::sort(keys_.begin(), keys_.end(),
              [](const EventKey& a, const EventKey& b) { return b < a; });
  }
  std::vector<EventKey> TakeKeys() { return std::exchange(keys_, {}); }

  template <typename Pred>
  void Filter(Pred keep) {
    size_t out = 0;
    for (const EventKey& key : keys_) {
      if (keep(key)) keys_[out++] = key;
    }
    keys_.resize(out);
  }

 private:
  std::vector<EventKey> keys_;  // latest first
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
