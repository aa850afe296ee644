// A d-ary min-heap of event keys (time, sequence, node index) packed into 16 bytes.
// Used by Simulator; templated on arity so bench_event_queue can compare 2 vs 4.
#ifndef BLKBENCH_ENGINE_SIM_EVENT_HEAP_H_
#define BLKBENCH_ENGINE_SIM_EVENT_HEAP_H_

#include <cassert>
#include <cstddef>
#include <cstdint>
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

  // Keeps only the keys for which keep(key) is true, then restores the heap in O(n).
  template <typename Pred>
  void Filter(Pred keep) {
    size_t out = 0;
    for (const EventKey& key : keys_) {  // out never passes the key being read
      if (keep(key)) keys_[out++] = key;
    }
    keys_.resize(out);
    if (out < 2) return;
    for (size_t i = (out - 2) / Arity + 1; i-- > 0;) SiftDown(i, keys_[i]);
  }

 private:
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

}  // namespace blkbench::engine

#endif  // BLKBENCH_ENGINE_SIM_EVENT_HEAP_H_
