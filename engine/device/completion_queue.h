// CompletionQueue: pending completions of a device model ordered by (time, submission order),
// shared by the models whose completion times are fixed at submission.
#ifndef BLKBENCH_ENGINE_DEVICE_COMPLETION_QUEUE_H_
#define BLKBENCH_ENGINE_DEVICE_COMPLETION_QUEUE_H_

#include <cstdint>
#include <queue>
#include <vector>

#include "engine/sim/time.h"

namespace blkbench::engine {

class CompletionQueue {
 public:
  void Push(SimTime at, uint64_t id, uint32_t hw_queue) {
    heap_.push(Entry{at, next_seq_++, id, hw_queue});
  }

  SimTime Next() const { return heap_.empty() ? kNever : heap_.top().at; }
  bool empty() const { return heap_.empty(); }
  size_t size() const { return heap_.size(); }

  // Pops every entry due at or before `now` in (time, sequence) order, calling
  // done(id, hw_queue) for each.
  template <typename Fn>
  void PopDue(SimTime now, Fn&& done) {
    while (!heap_.empty() && heap_.top().at <= now) {
      const Entry e = heap_.top();
      heap_.pop();
      done(e.id, e.hw_queue);
    }
  }

 private:
  struct Entry {
    SimTime at;
    uint64_t seq;  // ties broken by submission order so runs are reproducible
    uint64_t id;
    uint32_t hw_queue;
    bool operator>(const Entry& o) const { return at != o.at ? at > o.at : seq > o.seq; }
  };
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> heap_;
  uint64_t next_seq_ = 0;
};

// Per-hardware-queue in-flight accounting, so models can assert the driver-tag precondition.
class InFlightCounter {
 public:
  explicit InFlightCounter(uint32_t hw_queues) : per_queue_(hw_queues, 0) {}
  uint32_t on(uint32_t hw_queue) const { return per_queue_[hw_queue]; }
  uint32_t total() const { return total_; }
  void Add(uint32_t hw_queue) {
    ++per_queue_[hw_queue];
    ++total_;
  }
  void Remove(uint32_t hw_queue) {
    --per_queue_[hw_queue];
    --total_;
  }

 private:
  std::vector<uint32_t> per_queue_;
  uint32_t total_ = 0;
};

}  // namespace blkbench::engine

#endif  // BLKBENCH_ENGINE_DEVICE_COMPLETION_QUEUE_H_
