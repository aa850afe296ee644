// Microbenchmarks of the sbitmap_queue model's hot paths (get/clear, batch get/clear)
// so the engine's per-I/O bookkeeping cost is known. Not a test.
#include <vector>

#include "benchmark/benchmark.h"
#include "engine/blk/sbitmap_queue.h"

namespace blkbench::engine {
namespace {

SbitmapQueue MakeQueue(unsigned depth) {
  SbitmapQueueOptions o;
  o.sbitmap.nr_cpus = 4;
  o.sbitmap.seed = 1;
  return *SbitmapQueue::Create(depth, o);
}

// Steady state with the map half full: one Get and one Clear per iteration.
void BM_GetClear(benchmark::State& state) {
  SbitmapQueue sbq = MakeQueue(static_cast<unsigned>(state.range(0)));
  std::vector<int> held;
  held.reserve(static_cast<size_t>(state.range(0) / 2));
  for (int i = 0; i < state.range(0) / 2; ++i) held.push_back(sbq.Get(0));
  size_t next = 0;
  for (auto _ : state) {
    const int tag = sbq.Get(0);
    benchmark::DoNotOptimize(tag);
    benchmark::DoNotOptimize(sbq.Clear(static_cast<unsigned>(held[next]), 0));
    held[next] = tag;
    next = (next + 1) % held.size();
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_GetClear)->Arg(64)->Arg(256)->Arg(1023);

// Same with one waiter always queued, so every Clear runs the wake-up accounting.
void BM_GetClearWithWaiters(benchmark::State& state) {
  SbitmapQueue sbq = MakeQueue(static_cast<unsigned>(state.range(0)));
  std::vector<int> held;
  held.reserve(static_cast<size_t>(state.range(0) / 2));
  for (int i = 0; i < state.range(0) / 2; ++i) held.push_back(sbq.Get(0));
  WaitIndex wi;
  WaiterId id = 1;
  (void)sbq.Wait(SbitmapQueue::WaitPtr(wi), id);
  size_t next = 0;
  for (auto _ : state) {
    const int tag = sbq.Get(0);
    for (WaiterId w : sbq.Clear(static_cast<unsigned>(held[next]), 0)) {
      sbq.FinishWait(w);
      (void)sbq.Wait(SbitmapQueue::WaitPtr(wi), ++id);
    }
    held[next] = tag;
    next = (next + 1) % held.size();
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_GetClearWithWaiters)->Arg(64)->Arg(1023);

// A plug's batch of 32: GetBatchTags then ClearBatch (per iteration = 32 tags).
void BM_BatchGetClear32(benchmark::State& state) {
  SbitmapQueue sbq = MakeQueue(1023);
  for (auto _ : state) {
    const BatchTags got = sbq.GetBatchTags(0, 32);
    benchmark::DoNotOptimize(sbq.ClearBatch(std::span<const int>(got.tags.data(), got.size), 0));
  }
  state.SetItemsProcessed(state.iterations() * 32);
}
BENCHMARK(BM_BatchGetClear32);

}  // namespace
}  // namespace blkbench::engine

BENCHMARK_MAIN();
