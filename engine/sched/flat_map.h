// A sorted-vector map for the schedulers' small ordered sets (sort trees, FIFOs, the
// merge hash): the subset of std::map's interface they use, with the same order, so a
// run is the same event for event. Tens to a few hundred entries are typical; a
// binary search and a short memmove beat a tree node's allocation and rebalancing there.
// Any insert or erase invalidates iterators, so hold none across one.
#ifndef BLKBENCH_ENGINE_SCHED_FLAT_MAP_H_
#define BLKBENCH_ENGINE_SCHED_FLAT_MAP_H_

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
  using iterator = typename std::vector<value_type>::iterator;
  using const_iterator = typename std::vector<value_type>::const_iterator;

  bool empty() const { return items_.empty(); }
  size_t size() const { return items_.size(); }
  void clear() { items_.clear(); }
  iterator begin() { return items_.begin(); }
  iterator end() { return items_.end(); }
  const_iterator begin() const { return items_.begin(); }
  const_iterator end() const { return items_.end(); }

  const_iterator lower_bound(const K& key) const {
    return Bisect([&key](const K& k) { return k < key; });
  }
  const_iterator upper_bound(const K& key) const {
    return Bisect([&key](const K& k) { return !(key < k); });
  }
  const_iterator find(const K& key) const {
    const_iterator it = lower_bound(key);
    return it != items_.end() && !(key < it->first) ? it : items_.end();
  }
  iterator lower_bound(const K& key) { return Mutable(std::as_const(*this).lower_bound(key)); }
  iterator upper_bound(const K& key) { return Mutable(std::as_const(*this).upper_bound(key)); }
  iterator find(const K& key) { return Mutable(std::as_const(*this).find(key)); }

  // Inserts (key, value) unless the key is present; like std::map::emplace.
  std::pair<iterator, bool> emplace(const K& key, V value) {
    // A FIFO's key (the deadline, then the sequence) is the largest so far: no search.
    if (items_.empty() || items_.back().first < key) {
      items_.push_back(value_type{key, std::move(value)});
      return {items_.end() - 1, true};
    }
    iterator it = lower_bound(key);
    if (it != items_.end() && !(key < it->first)) return {it, false};
    return {items_.insert(it, value_type{key, std::move(value)}), true};
  }
  // The value at `key`, inserted value-initialised if absent; like std::map::operator[].
  V& operator[](const K& key) { return emplace(key, V{}).first->second; }
  size_t erase(const K& key) {
    iterator it = find(key);
    if (it == items_.end()) return 0;
    items_.erase(it);
    return 1;
  }
  iterator erase(const_iterator it) { return items_.erase(it); }

 private:
  // The first entry whose key is not `before` (before: true for a prefix of the keys).
  // A bisection that halves the range whatever the comparison says, so a step has no
  // branch: the keys a scheduler looks up are random (sectors), and a mispredicted
  // branch per level cost more than the compare.
  template <typename Before>
  const_iterator Bisect(Before before) const {
    const value_type* base = items_.data();
    size_t n = items_.size();
    while (n > 1) {
      const size_t half = n / 2;
      // Multiplying by the comparison keeps GCC from turning the step into a branch.
      base += half * static_cast<size_t>(before(base[half - 1].first));
      n -= half;
    }
    if (n == 1) base += static_cast<size_t>(before(base->first));
    return items_.cbegin() + (base - items_.data());
  }
  iterator Mutable(const_iterator it) { return items_.begin() + (it - items_.cbegin()); }

  std::vector<value_type> items_;
};

}  // namespace blkbench::engine

#endif  // BLKBENCH_ENGINE_SCHED_FLAT_MAP_H_
