// The discrete-event simulator: a deterministic, allocation-free event queue that
// calls EventHandler::OnEvent in (time, scheduling order) and hashes the trace.
#ifndef BLKBENCH_ENGINE_SIM_SIMULATOR_H_
#define BLKBENCH_ENGINE_SIM_SIMULATOR_H_

#include <cassert>
#include <cstdint>
#include <vector>

#include "engine/sim/event_heap.h"
#include "engine/sim/hash.h"
#include "engine/sim/time.h"

namespace blkbench::engine {

// A component that receives events. `kind` and `arg` are whatever the component passed
// to Schedule (typically an enum value and a request/slot index); the simulator never
// interprets them except to hash them into the trace.
class EventHandler {
 public:
  virtual ~EventHandler() = default;
  virtual void OnEvent(uint32_t kind, uint64_t arg) = 0;
};

// Names one scheduled event. Becomes stale (Cancel returns false) once the event has
// run or been cancelled; a default-constructed id is never valid.
struct EventId {
  uint64_t value = 0;
  bool valid() const { return value != 0; }
  friend bool operator==(EventId a, EventId b) { return a.value == b.value; }
};

// Runs events in order of (time, sequence number): events at the same time run in the
// order they were scheduled, so a run is a pure function of its inputs.
//
// Not thread-safe; one simulator per simulated machine. Handlers may Schedule and
// Cancel from inside OnEvent. Event nodes and heap storage are pooled and reused, so
// once the pool has reached the run's high-water mark nothing allocates.
//
// Cancellation is O(1): it bumps the node's generation and marks the heap key dead; dead
// keys are skipped when they reach the top, and the heap is compacted when more than
// half of it is dead.
class Simulator {
 public:
  Simulator() = default;
  Simulator(const Simulator&) = delete;
  Simulator& operator=(const Simulator&) = delete;

  // Schedules target->OnEvent(kind, arg) at time `at`.
  // REQUIRES: at >= now(), target != nullptr, fewer than 2^24 events pending.
  EventId Schedule(SimTime at, EventHandler* target, uint32_t kind, uint64_t arg);
  EventId ScheduleAfter(SimTime delay, EventHandler* target, uint32_t kind, uint64_t arg) {
    return Schedule(now_ + delay, target, kind, arg);
  }

  // Cancels a pending event. Returns false if `id` already ran, was cancelled or is
  // invalid.
  bool Cancel(EventId id);

  // True if `id` names an event that has neither run nor been cancelled.
  bool IsPending(EventId id) const;

  // Runs the next live event, advancing now() to its time. Returns false (and changes
  // nothing) if no event is pending.
  bool Step();

  // Runs every event with time <= `until`, then sets now() to `until` (if it is later).
  void RunUntil(SimTime until);

  // Runs until no event is pending or Stop() is called from a handler.
  void Run();
  void Stop() { stop_requested_ = true; }

  // Time of the next live event, or kNever.
  SimTime NextEventTime();

  SimTime now() const { return now_; }
  uint64_t events_executed() const { return events_executed_; }
  uint64_t events_cancelled() const { return events_cancelled_; }
  size_t pending() const { return live_; }

  // The running hash of every executed event's (time, kind, arg) and every MixTrace
  // value, in execution order. Equal hashes ⇒ (with overwhelming probability) equal
  // traces; tests use it to assert determinism.
  uint64_t trace_hash() const { return trace_.value(); }
  void MixTrace(uint64_t v) { trace_.Add(v); }

  // Pre-sizes the pools for `n` simultaneously pending events.
  void Reserve(size_t n);

 private:
  struct Node {
    EventHandler* target = nullptr;
    uint64_t arg = 0;
    uint32_t kind = 0;
    uint32_t generation = 1;  // odd/even does not matter; 0 is never used
    bool live = false;        // scheduled, not yet run or cancelled
    uint32_t next_free = 0;   // while free: the next free node, or kNoNode
  };
  static constexpr uint32_t kNoNode = ~uint32_t{0};

  static EventId MakeId(uint32_t node, uint32_t generation) {
    return EventId{(uint64_t{generation} << 32) | node};
  }
  uint32_t AllocNode();
  void FreeNode(uint32_t index);
  // Drops dead keys from the top of the heap; returns false if the heap is empty.
  bool SkipDead();
  // Runs the event at the top of the heap. REQUIRES: SkipDead() returned true.
  void RunTop();
  void MaybeCompact();

  EventQueue heap_;
  std::vector<Node> nodes_;
  // The free nodes, linked through Node::next_free, the last freed first (no vector to
  // grow or bounds-check on the hot path).
  uint32_t free_head_ = kNoNode;
  SimTime now_ = 0;
  uint64_t next_sequence_ = 0;
  uint64_t events_executed_ = 0;
  uint64_t events_cancelled_ = 0;
  size_t live_ = 0;
  size_t dead_in_heap_ = 0;
  bool stop_requested_ = false;
  TraceHash trace_;
};

// Inline: every component schedules several events per request.
inline uint32_t Simulator::AllocNode() {
  if (free_head_ != kNoNode) {
    const uint32_t index = free_head_;
    free_head_ = nodes_[index].next_free;
    return index;
  }
  assert(nodes_.size() < EventKey::kMaxNodes);
  nodes_.emplace_back();
  return static_cast<uint32_t>(nodes_.size() - 1);
}

inline void Simulator::FreeNode(uint32_t index) {
  Node& node = nodes_[index];
  node.live = false;
  node.target = nullptr;
  if (++node.generation == 0) node.generation = 1;  // 0 would make MakeId(0, 0) == {}
  node.next_free = free_head_;
  free_head_ = index;
}

inline EventId Simulator::Schedule(SimTime at, EventHandler* target, uint32_t kind, uint64_t arg) {
  assert(at >= now_);
  assert(target != nullptr);
  assert(next_sequence_ < EventKey::kMaxSequence);
  uint32_t index = AllocNode();
  Node& node = nodes_[index];
  node.target = target;
  node.kind = kind;
  node.arg = arg;
  node.live = true;
  heap_.Push(EventKey{at, (next_sequence_++ << EventKey::kNodeBits) | index});
  ++live_;
  return MakeId(index, node.generation);
}

}  // namespace blkbench::engine

#endif  // BLKBENCH_ENGINE_SIM_SIMULATOR_H_
