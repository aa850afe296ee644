// Tests for the event queue: ordering, ties, cancellation, RunUntil, a randomized
// comparison against std::multimap, and trace-hash determinism.
#include "engine/sim/simulator.h"

#include <map>
#include <utility>
#include <vector>

#include "engine/sim/rng.h"
#include "gtest/gtest.h"

namespace blkbench::engine {
namespace {

// Records (now, kind, arg) of every event it receives.
class Recorder : public EventHandler {
 public:
  explicit Recorder(Simulator& sim) : sim_(sim) {}
  void OnEvent(uint32_t kind, uint64_t arg) override { log.push_back({sim_.now(), kind, arg}); }
  struct Entry {
    SimTime time;
    uint32_t kind;
    uint64_t arg;
    bool operator==(const Entry&) const = default;
  };
  std::vector<Entry> log;

 private:
  Simulator& sim_;
};

TEST(SimulatorTest, RunsInTimeOrderAndTiesInScheduleOrder) {
  Simulator sim;
  Recorder r(sim);
  sim.Schedule(30, &r, 1, 0);
  sim.Schedule(10, &r, 2, 0);
  sim.Schedule(20, &r, 3, 0);
  for (uint64_t i = 0; i < 5; ++i) sim.Schedule(20, &r, 4, i);
  sim.Run();
  std::vector<Recorder::Entry> want = {{10, 2, 0}, {20, 3, 0}, {20, 4, 0}, {20, 4, 1},
                                       {20, 4, 2}, {20, 4, 3}, {20, 4, 4}, {30, 1, 0}};
  EXPECT_EQ(r.log, want);
  EXPECT_EQ(sim.events_executed(), 8u);
  EXPECT_EQ(sim.now(), 30u);
  EXPECT_FALSE(sim.Step());
}

TEST(SimulatorTest, CancelSkipsEventAndIdsGoStale) {
  Simulator sim;
  Recorder r(sim);
  EventId a = sim.Schedule(10, &r, 1, 0);
  EventId b = sim.Schedule(20, &r, 2, 0);
  EXPECT_TRUE(sim.IsPending(a));
  EXPECT_TRUE(sim.Cancel(a));
  EXPECT_FALSE(sim.Cancel(a));
  EXPECT_FALSE(sim.IsPending(a));
  EXPECT_FALSE(sim.Cancel(EventId{}));
  EXPECT_EQ(sim.pending(), 1u);
  EXPECT_EQ(sim.NextEventTime(), 20u);
  // The cancelled node is recycled only once its heap key is gone, and then with a new
  // generation: the old id must not cancel the new event.
  sim.Run();
  EventId c = sim.Schedule(30, &r, 3, 0);
  EXPECT_FALSE(sim.Cancel(a));
  EXPECT_FALSE(sim.Cancel(b));
  EXPECT_TRUE(sim.IsPending(c));
  sim.Run();
  ASSERT_EQ(r.log.size(), 2u);
  EXPECT_EQ(r.log[0].kind, 2u);
  EXPECT_EQ(r.log[1].kind, 3u);
  EXPECT_EQ(sim.events_cancelled(), 1u);
}

TEST(SimulatorTest, RunUntilStopsAtBoundaryInclusiveAndAdvancesClock) {
  Simulator sim;
  Recorder r(sim);
  sim.Schedule(10, &r, 1, 0);
  sim.Schedule(20, &r, 2, 0);
  sim.Schedule(21, &r, 3, 0);
  sim.RunUntil(20);
  EXPECT_EQ(r.log.size(), 2u);
  EXPECT_EQ(sim.now(), 20u);
  sim.RunUntil(100);
  EXPECT_EQ(r.log.size(), 3u);
  EXPECT_EQ(sim.now(), 100u);
  sim.RunUntil(kNever);  // empty queue: the clock must not jump to kNever
  EXPECT_EQ(sim.now(), 100u);
}

// A handler that reschedules itself and cancels a timer, as blk-mq components will.
class Ticker : public EventHandler {
 public:
  Ticker(Simulator& sim, Rng rng) : sim_(sim), rng_(rng) {}
  void OnEvent(uint32_t kind, uint64_t arg) override {
    if (kind == 1) {
      EXPECT_FALSE(sim_.IsPending(self_));  // its own id is stale inside the handler
      sim_.MixTrace(arg * 7);
      if (arg < 2000) self_ = sim_.ScheduleAfter(1 + rng_.Uniform(100), this, 1, arg + 1);
      if (timer_.valid()) sim_.Cancel(timer_);
      timer_ = sim_.ScheduleAfter(50, this, 2, arg);
    }
  }

 private:
  Simulator& sim_;
  Rng rng_;
  EventId self_;
  EventId timer_;
};

uint64_t RunTicker(uint64_t seed) {
  Simulator sim;
  Ticker t(sim, Rng(seed));
  sim.Schedule(0, &t, 1, 0);
  sim.Run();
  return sim.trace_hash();
}

TEST(SimulatorTest, TraceHashIsDeterministicAndSeedSensitive) {
  EXPECT_EQ(RunTicker(1), RunTicker(1));
  EXPECT_NE(RunTicker(1), RunTicker(2));
}

TEST(SimulatorTest, TraceHashSeesOrderOfEqualTimeEvents) {
  auto run = [](bool swap) {
    Simulator sim;
    Recorder r(sim);
    sim.Schedule(5, &r, swap ? 2 : 1, 0);
    sim.Schedule(5, &r, swap ? 1 : 2, 0);
    sim.Run();
    return sim.trace_hash();
  };
  EXPECT_NE(run(false), run(true));
}

// Random schedules and cancels, checked against a multimap keyed by (time, sequence).
TEST(SimulatorTest, MatchesReferenceUnderRandomLoad) {
  Simulator sim;
  Recorder r(sim);
  Rng rng(42);
  std::multimap<std::pair<SimTime, uint64_t>, uint64_t> ref;  // (time, seq) -> arg
  std::vector<std::pair<EventId, std::pair<SimTime, uint64_t>>> ids;
  std::vector<Recorder::Entry> want;
  uint64_t seq = 0;
  for (int round = 0; round < 200; ++round) {
    int adds = static_cast<int>(rng.Uniform(400));
    for (int i = 0; i < adds; ++i) {
      // Narrow time range: many ties.
      SimTime at = sim.now() + rng.Uniform(64);
      EventId id = sim.Schedule(at, &r, 9, seq);
      ref.emplace(std::make_pair(at, seq), seq);
      ids.push_back({id, {at, seq}});
      ++seq;
    }
    int cancels = static_cast<int>(rng.Uniform(150));
    for (int i = 0; i < cancels && !ids.empty(); ++i) {
      size_t k = rng.Uniform(ids.size());
      bool was_pending = ref.count(ids[k].second) > 0;
      EXPECT_EQ(sim.Cancel(ids[k].first), was_pending);
      ref.erase(ids[k].second);
      ids[k] = ids.back();
      ids.pop_back();
    }
    int steps = static_cast<int>(rng.Uniform(350));
    for (int i = 0; i < steps && !ref.empty(); ++i) {
      auto it = ref.begin();
      want.push_back({it->first.first, 9, it->second});
      ref.erase(it);
      ASSERT_TRUE(sim.Step());
    }
    ASSERT_EQ(sim.pending(), ref.size());
  }
  for (auto& [key, arg] : ref) want.push_back({key.first, 9, arg});
  sim.Run();
  EXPECT_EQ(r.log, want);
  EXPECT_GT(sim.events_cancelled(), 1000u);  // compaction ran
}

TEST(EventHeapTest, BinaryAndQuaternaryAgree) {
  EventHeap<2> h2;
  EventHeap<4> h4;
  Rng rng(7);
  for (uint64_t i = 0; i < 5000; ++i) {
    EventKey k{rng.Uniform(1000), i << EventKey::kNodeBits};
    h2.Push(k);
    h4.Push(k);
  }
  h2.Filter([](const EventKey& k) { return k.sequence() % 3 != 0; });
  h4.Filter([](const EventKey& k) { return k.sequence() % 3 != 0; });
  EventKey prev{0, 0};
  while (!h2.empty()) {
    ASSERT_FALSE(h4.empty());
    EventKey a = h2.Pop(), b = h4.Pop();
    ASSERT_EQ(a.order, b.order);
    ASSERT_FALSE(a < prev);
    prev = a;
  }
  EXPECT_TRUE(h4.empty());
}

// The simulator's sorted queue pops in the heaps' order, with pushes and pops mixed as a
// run mixes them (most new events due soon, some far ahead) and a Filter in between.
TEST(EventHeapTest, SortedQueueAgreesWithTheHeap) {
  EventHeap<4> heap;
  SortedEventQueue sorted;
  Rng rng(11);
  SimTime now = 0;
  uint64_t seq = 0;
  for (int round = 0; round < 20000; ++round) {
    const int pushes = static_cast<int>(rng.Uniform(3));
    for (int p = 0; p < pushes; ++p) {
      const SimTime at = now + (rng.Uniform(10) == 0 ? rng.Uniform(1'000'000) : rng.Uniform(50));
      const EventKey k{at, (seq << EventKey::kNodeBits) | (seq & 0xff)};
      ++seq;
      heap.Push(k);
      sorted.Push(k);
    }
    if (round % 5000 == 4999) {
      heap.Filter([](const EventKey& k) { return k.sequence() % 7 != 0; });
      sorted.Filter([](const EventKey& k) { return k.sequence() % 7 != 0; });
    }
    ASSERT_EQ(heap.size(), sorted.size());
    if (!heap.empty() && rng.Uniform(2) == 0) {
      ASSERT_EQ(heap.top().order, sorted.top().order);
      const EventKey a = heap.Pop(), b = sorted.Pop();
      ASSERT_EQ(a.time, b.time);
      ASSERT_EQ(a.order, b.order);
      now = a.time;
    }
  }
  while (!heap.empty()) ASSERT_EQ(heap.Pop().order, sorted.Pop().order);
  EXPECT_TRUE(sorted.empty());
}

// EventQueue switches to the heap past kToHeap pending and back below kToSorted; the
// order it pops in never changes.
TEST(EventHeapTest, EventQueueKeepsItsOrderAcrossTheSwitch) {
  EventHeap<2> ref;
  EventQueue queue;
  Rng rng(13);
  uint64_t seq = 0;
  SimTime now = 0;
  bool was_heap = false, back_to_sorted = false;
  for (const size_t target : {300, 2000, 50, 1500, 10, 0}) {
    while (ref.size() < target) {
      const EventKey k{now + rng.Uniform(100'000), seq++ << EventKey::kNodeBits};
      ref.Push(k);
      queue.Push(k);
    }
    while (ref.size() > target) {
      const EventKey a = ref.Pop(), b = queue.Pop();
      ASSERT_EQ(a.order, b.order);
      now = a.time;
    }
    was_heap = was_heap || queue.heap_mode();
    back_to_sorted = back_to_sorted || (was_heap && !queue.heap_mode());
    ASSERT_EQ(queue.size(), ref.size());
  }
  EXPECT_TRUE(was_heap);
  EXPECT_TRUE(back_to_sorted);
  EXPECT_TRUE(queue.empty());
}

}  // namespace
}  // namespace blkbench::engine
