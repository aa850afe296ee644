// A sorted-vector map for the schedulers' small ordered sets (sort trees, FIFOs, the
// merge hash): the subset of std::map's interface they use, with the same order, so a
// run is the same event for event. Tens to a few hundred entries are typical; a
// binary search and a short memmove beat a tree node's allocation and rebalancing there.
// Any insert or erase invalidates iterators, so hold none across one.
#ifndef BLKBENCH_ENGINE_SCHED_FLAT_MAP_H_
#define BLKBENCH_ENGINE_SCHED_FLAT_MAP_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace blkbench::engine {

// The schedulers' (sector or time, sequence) key, ordered as std::pair<uint64_t, uint64_t>.
// Why not std::pair: its assignment operators are user-provided, so a vector of them
// shifts element by element on insert and erase, where this one (trivially copyable)
// shifts with one memmove; and the comparison as one 128-bit number has no branch, so the
// bisection does not mispredict.
struct PairKey {
  uint64_t first = 0;
  uint64_t second = 0;

  friend bool operator<(const PairKey& a, const PairKey& b) { return a.Wide() < b.Wide(); }
  friend bool operator==(const PairKey& a, const PairKey& b) {
    return a.first == b.first && a.second == b.second;
  }

 private:
  unsigned __int128 Wide() const { return (static_cast<unsigned __int128>(first) << 64) | second; }
};

template <typename K, typename V>
class FlatMap {
 public:
  // An aggregate rather than std::pair, so that it is trivially copyable when K and V are
  // (see PairKey); it has std::pair's member names.
  struct value_type {
    K first;
    V second;
  };
  using iterator = value_type*;
  using const_iterator = const value_type*;

  bool empty() const { return head_ == tail_; }
  size_t size() const { return tail_ - head_; }
  void clear() { head_ = tail_ = slots_.size() / 2; }
  iterator begin() { return slots_.data() + head_; }
  iterator end() { return slots_.data() + tail_; }
  const_iterator begin() const { return slots_.data() + head_; }
  const_iterator end() const { return slots_.data() + tail_; }

  const_iterator lower_bound(const K& key) const {
    return Bisect([&key](const K& k) { return k < key; });
  }
  const_iterator upper_bound(const K& key) const {
    return Bisect([&key](const K& k) { return !(key < k); });
  }
  const_iterator find(const K& key) const {
    const_iterator it = lower_bound(key);
    return it != end() && !(key < it->first) ? it : end();
  }
  iterator lower_bound(const K& key) { return Mutable(std::as_const(*this).lower_bound(key)); }
  iterator upper_bound(const K& key) { return Mutable(std::as_const(*this).upper_bound(key)); }
  iterator find(const K& key) { return Mutable(std::as_const(*this).find(key)); }

  // Inserts (key, value) unless the key is present; like std::map::emplace.
  std::pair<iterator, bool> emplace(const K& key, V value) {
    size_t at = size();
    // A FIFO's key (the deadline, then the sequence) is the largest so far: no search.
    if (!empty() && !(slots_[tail_ - 1].first < key)) {
      const const_iterator it = lower_bound(key);
      if (it != end() && !(key < it->first)) return {Mutable(it), false};
      at = static_cast<size_t>(it - begin());
    }
    const iterator slot = OpenGap(at);
    *slot = value_type{key, std::move(value)};
    return {slot, true};
  }
  // The value at `key`, inserted value-initialised if absent; like std::map::operator[].
  V& operator[](const K& key) { return emplace(key, V{}).first->second; }
  size_t erase(const K& key) {
    const const_iterator it = find(key);
    if (it == end()) return 0;
    erase(it);
    return 1;
  }
  // Returns the element that followed the erased one.
  iterator erase(const_iterator it) {
    const size_t at = static_cast<size_t>(it - begin());
    value_type* base = slots_.data();
    if (at < size() / 2) {  // the keys before it move up one
      std::copy_backward(base + head_, base + head_ + at, base + head_ + at + 1);
      ++head_;
    } else {  // the keys after it move down one
      std::copy(base + head_ + at + 1, base + tail_, base + head_ + at);
      --tail_;
    }
    return begin() + at;
  }

 private:
  // Makes room for an entry at position `at` (0..size()) and returns its slot. The
  // entries live in the middle of slots_ with room on both sides, and the shorter side
  // of the gap moves: a quarter of the map on average for a random key, where a plain
  // vector moves half (the moves were the maps' main cost in seed 000).
  iterator OpenGap(size_t at) {
    const bool front = at < size() / 2;
    if (front ? head_ == 0 : tail_ == slots_.size()) Recentre(size() + 1);
    value_type* base = slots_.data();
    if (front) {
      std::copy(base + head_, base + head_ + at, base + head_ - 1);
      --head_;
    } else {
      std::copy_backward(base + head_ + at, base + tail_, base + tail_ + 1);
      ++tail_;
    }
    return begin() + at;
  }

  // Centres the entries in slots_, growing it (to twice `need`, at least 16) unless it
  // is already that large: each side then has room for need / 2 more entries, so this
  // O(n) move happens once per O(n) insertions.
  void Recentre(size_t need) {
    const size_t n = size();
    const size_t want = std::max<size_t>(16, 2 * need);
    if (slots_.size() < want) {
      std::vector<value_type> bigger(want);
      const size_t head = (want - n) / 2;
      std::copy(begin(), end(), bigger.data() + head);
      slots_ = std::move(bigger);
      head_ = head;
    } else {
      const size_t head = (slots_.size() - n) / 2;
      value_type* base = slots_.data();
      if (head < head_) {
        std::copy(base + head_, base + tail_, base + head);
      } else if (head > head_) {
        std::copy_backward(base + head_, base + tail_, base + head + n);
      }
      head_ = head;
    }
    tail_ = head_ + n;
  }

  // The first entry whose key is not `before` (before: true for a prefix of the keys).
  // A bisection that halves the range whatever the comparison says, so a step has no
  // branch: the keys a scheduler looks up are random (sectors), and a mispredicted
  // branch per level cost more than the compare.
  template <typename Before>
  const_iterator Bisect(Before before) const {
    const value_type* base = begin();
    size_t n = size();
    while (n > 1) {
      const size_t half = n / 2;
      // Multiplying by the comparison keeps GCC from turning the step into a branch.
      base += half * static_cast<size_t>(before(base[half - 1].first));
      n -= half;
    }
    if (n == 1) base += static_cast<size_t>(before(base->first));
    return base;
  }
  iterator Mutable(const_iterator it) { return const_cast<iterator>(it); }

  std::vector<value_type> slots_;  // slots_[head_, tail_) sorted by key; the rest is room
  size_t head_ = 0;
  size_t tail_ = 0;
};

}  // namespace blkbench::engine

#endif  // BLKBENCH_ENGINE_SCHED_FLAT_MAP_H_
