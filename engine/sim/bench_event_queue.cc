// Google Benchmark: event-queue throughput (schedule + pop) at a steady queue size, for
// the Simulator and for the bare 2-ary and 4-ary heaps it could use.
#include <benchmark/benchmark.h>

#include <cstdint>

#include "engine/sim/event_heap.h"
#include "engine/sim/rng.h"
#include "engine/sim/simulator.h"

namespace blkbench::engine {
namespace {

// Each event reschedules itself a random delay ahead ("hold model"), so the queue stays
// at its initial size and every iteration is one pop + one push.
class Churn : public EventHandler {
 public:
  explicit Churn(Simulator& sim) : sim_(sim), rng_(1) {}
  void OnEvent(uint32_t kind, uint64_t arg) override {
    sim_.ScheduleAfter(1 + rng_.Uniform(10'000), this, kind, arg);
  }
  Rng& rng() { return rng_; }

 private:
  Simulator& sim_;
  Rng rng_;
};

void BM_SimulatorHold(benchmark::State& state) {
  const int64_t n = state.range(0);
  Simulator sim;
  Churn churn(sim);
  for (int64_t i = 0; i < n; ++i) sim.Schedule(churn.rng().Uniform(10'000), &churn, 0, i);
  for (auto _ : state) sim.Step();
  state.SetItemsProcessed(state.iterations());
  state.counters["events/s"] =
      benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}

// As above, plus a cancelled timer per event (the cost of lazy cancellation).
class ChurnWithTimer : public EventHandler {
 public:
  explicit ChurnWithTimer(Simulator& sim) : sim_(sim), rng_(1) {}
  void OnEvent(uint32_t kind, uint64_t arg) override {
    if (kind == 1) return;
    EventId timer = sim_.ScheduleAfter(20'000, this, 1, arg);
    sim_.ScheduleAfter(1 + rng_.Uniform(10'000), this, 0, arg);
    sim_.Cancel(timer);
  }
  Rng& rng() { return rng_; }

 private:
  Simulator& sim_;
  Rng rng_;
};

void BM_SimulatorHoldWithCancel(benchmark::State& state) {
  const int64_t n = state.range(0);
  Simulator sim;
  ChurnWithTimer churn(sim);
  for (int64_t i = 0; i < n; ++i) sim.Schedule(churn.rng().Uniform(10'000), &churn, 0, i);
  for (auto _ : state) sim.Step();
  state.counters["events/s"] =
      benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}

template <typename Queue>
void BM_HeapHold(benchmark::State& state) {
  const int64_t n = state.range(0);
  Queue heap;
  Rng rng(1);
  uint64_t seq = 0;
  for (int64_t i = 0; i < n; ++i) {
    heap.Push(EventKey{rng.Uniform(10'000), (seq++ << EventKey::kNodeBits) | (i & 0xffff)});
  }
  for (auto _ : state) {
    EventKey k = heap.Pop();
    heap.Push(
        EventKey{k.time + 1 + rng.Uniform(10'000), (seq++ << EventKey::kNodeBits) | k.node()});
  }
  state.counters["events/s"] =
      benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}

BENCHMARK(BM_SimulatorHold)->Arg(64)->Arg(4096)->Arg(65536);
BENCHMARK(BM_SimulatorHoldWithCancel)->Arg(64)->Arg(4096)->Arg(65536);
BENCHMARK(BM_HeapHold<EventHeap<2>>)->Arg(16)->Arg(64)->Arg(4096)->Arg(65536);
BENCHMARK(BM_HeapHold<EventHeap<4>>)->Arg(16)->Arg(64)->Arg(4096)->Arg(65536);
BENCHMARK(BM_HeapHold<SortedEventQueue>)->Arg(16)->Arg(64)->Arg(512);
BENCHMARK(BM_HeapHold<EventQueue>)->Arg(16)->Arg(64)->Arg(4096)->Arg(65536);

}  // namespace
}  // namespace blkbench::engine

BENCHMARK_MAIN();
