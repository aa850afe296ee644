// The discrete-event simulator: node pool, lazy cancellation and the run loop.
#include "engine/sim/simulator.h"

#include <cassert>

namespace blkbench::engine {

void Simulator::Reserve(size_t n) {
  heap_.reserve(n);
  nodes_.reserve(n);
}

bool Simulator::IsPending(EventId id) const {
  uint32_t index = static_cast<uint32_t>(id.value);
  uint32_t generation = static_cast<uint32_t>(id.value >> 32);
  return id.valid() && index < nodes_.size() && nodes_[index].generation == generation &&
         nodes_[index].live;
}

bool Simulator::Cancel(EventId id) {
  if (!IsPending(id)) return false;
  // The key stays in the heap; the node is recycled when the key is dropped, so its
  // index cannot be reused while a key still refers to it.
  nodes_[static_cast<uint32_t>(id.value)].live = false;
  --live_;
  ++dead_in_heap_;
  ++events_cancelled_;
  MaybeCompact();
  return true;
}

void Simulator::MaybeCompact() {
  // Amortised O(1) per cancel: compaction is O(n) and happens only after n/2 cancels.
  if (dead_in_heap_ < 64 || dead_in_heap_ * 2 < heap_.size()) return;
  heap_.Filter([this](const EventKey& key) {
    if (nodes_[key.node()].live) return true;
    FreeNode(key.node());
    return false;
  });
  dead_in_heap_ = 0;
}

bool Simulator::SkipDead() {
  while (!heap_.empty()) {
    uint32_t index = heap_.top().node();
    if (nodes_[index].live) return true;
    heap_.Pop();
    FreeNode(index);
    --dead_in_heap_;
  }
  return false;
}

SimTime Simulator::NextEventTime() { return SkipDead() ? heap_.top().time : kNever; }

bool Simulator::Step() {
  if (!SkipDead()) return false;
  RunTop();
  return true;
}

void Simulator::RunTop() {
  EventKey key = heap_.Pop();
  uint32_t index = key.node();
  Node& node = nodes_[index];
  EventHandler* target = node.target;
  uint32_t kind = node.kind;
  uint64_t arg = node.arg;
  // Free before dispatch: the handler may schedule again and reuse this node, and the
  // event's id must already read as stale inside its own handler.
  FreeNode(index);
  --live_;
  now_ = key.time;
  ++events_executed_;
  trace_.Add(key.time);
  trace_.Add((uint64_t{kind} << 32) ^ 0x5bd1e995u);
  trace_.Add(arg);
  target->OnEvent(kind, arg);
}

void Simulator::RunUntil(SimTime until) {
  while (SkipDead() && heap_.top().time <= until) RunTop();
  if (until != kNever && until > now_) now_ = until;
}

void Simulator::Run() {
  stop_requested_ = false;
  while (!stop_requested_ && Step()) {
  }
}

}  // namespace blkbench::engine
