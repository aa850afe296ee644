// The elevator's back-merge hash (q->elevator->hash, elv_rqhash_add/del/find): queued
// requests by end sector, so a bio that starts where a request ends finds it in O(1).
// Several requests can end at the same sector; a lookup returns the newest (the highest
// sequence), as the kernel's buckets list the newest first. Nothing iterates the table,
// so its (per-process seeded) hash order cannot reach a run's results.
#ifndef BLKBENCH_ENGINE_SCHED_RQ_HASH_H_
#define BLKBENCH_ENGINE_SCHED_RQ_HASH_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"

namespace blkbench::engine {

template <typename V>
class RqHash {
 public:
  // Files `value` under `end` with sequence `seq` (unique among those at `end`).
  void Add(uint64_t end, uint64_t seq, V value) {
    Entries& at = by_end_[end];
    // Sequences mostly arrive in order: the search starts from the back.
    auto it = at.end();
    while (it != at.begin() && seq < (it - 1)->seq) --it;
    at.insert(it, Entry{seq, value});
    ++size_;
  }
  // Removes what was filed under (end, seq); false if nothing was.
  bool Del(uint64_t end, uint64_t seq) {
    const auto found = by_end_.find(end);
    if (found == by_end_.end()) return false;
    Entries& at = found->second;
    const auto it =
        std::find_if(at.begin(), at.end(), [seq](const Entry& e) { return e.seq == seq; });
    if (it == at.end()) return false;
    at.erase(it);
    if (at.empty()) by_end_.erase(found);
    --size_;
    return true;
  }
  // The newest value filed under `end`, or V{} if none.
  V Find(uint64_t end) const {
    const auto found = by_end_.find(end);
    return found == by_end_.end() ? V{} : found->second.back().value;
  }
  size_t size() const { return size_; }

 private:
  struct Entry {
    uint64_t seq;
    V value;
  };
  using Entries = absl::InlinedVector<Entry, 1>;  // by sequence, never empty
  absl::flat_hash_map<uint64_t, Entries> by_end_;
  size_t size_ = 0;
};

}  // namespace blkbench::engine

#endif  // BLKBENCH_ENGINE_SCHED_RQ_HASH_H_
