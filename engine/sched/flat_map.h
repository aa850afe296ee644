// A sorted-vector map for the schedulers' small ordered sets (sort trees, FIFOs, the
// merge hash): the subset of std::map's interface they use, with the same order, so a
// run is the same event for event. Tens to a few hundred entries are typical; a
// binary search and a short memmove beat a tree node's allocation and rebalancing there.
// Any insert or erase invalidates iterators, so hold none across one.
#ifndef BLKBENCH_ENGINE_SCHED_FLAT_MAP_H_
#define BLKBENCH_ENGINE_SCHED_FLAT_MAP_H_

#include <algorithm>
#include <cstddef>
#include <utility>
#include <vector>

namespace blkbench::engine {

template <typename K, typename V>
class FlatMap {
 public:
  using value_type = std::pair<K, V>;
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
    return std::lower_bound(items_.begin(), items_.end(), key, KeyLess);
  }
  const_iterator upper_bound(const K& key) const {
    return std::upper_bound(items_.begin(), items_.end(), key,
                            [](const K& k, const value_type& v) { return k < v.first; });
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
    iterator it = lower_bound(key);
    if (it != items_.end() && !(key < it->first)) return {it, false};
    return {items_.emplace(it, key, std::move(value)), true};
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
  static bool KeyLess(const value_type& v, const K& k) { return v.first < k; }
  iterator Mutable(const_iterator it) { return items_.begin() + (it - items_.cbegin()); }

  std::vector<value_type> items_;
};

}  // namespace blkbench::engine

#endif  // BLKBENCH_ENGINE_SCHED_FLAT_MAP_H_
