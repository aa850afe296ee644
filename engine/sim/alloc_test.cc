// Checks that the simulator's steady state does not allocate: global operator new is
// replaced in this test binary by a counting version.
#include <atomic>
#include <cstdlib>
#include <new>

#include "engine/sim/rng.h"
#include "engine/sim/simulator.h"
#include "engine/sim/spinlock.h"
#include "gtest/gtest.h"

namespace {
std::atomic<uint64_t> g_allocations{0};
}  // namespace

void* operator new(std::size_t size) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

namespace blkbench::engine {
namespace {

// Reschedules itself with a cancelled timeout each time, like a request with a timer.
class Churn : public EventHandler {
 public:
  Churn(Simulator& sim, Spinlock& lock) : sim_(sim), lock_(lock) {}
  void OnEvent(uint32_t kind, uint64_t arg) override {
    if (kind == 1) return;
    LockGrant g = lock_.Acquire(sim_.now(), static_cast<int>(arg % 4), 100);
    EventId timeout = sim_.Schedule(g.released + 50'000, this, 1, arg);
    sim_.Schedule(g.released + rng_.Uniform(2'000), this, 0, arg);
    sim_.Cancel(timeout);
  }

 private:
  Simulator& sim_;
  Spinlock& lock_;
  Rng rng_{3};
};

TEST(AllocationTest, SteadyStateDoesNotAllocate) {
  absl::StatusOr<MachineProfile> p = LoadMachineProfile("small-vm");
  ASSERT_TRUE(p.ok()) << p.status();
  Simulator sim;
  Spinlock lock(*p, *p->CostsOf("mq-deadline")->lock, "lock");
  Churn churn(sim, lock);
  for (uint64_t i = 0; i < 1000; ++i) sim.Schedule(i, &churn, 0, i);
  for (int i = 0; i < 200'000; ++i) sim.Step();  // warm up: pools reach their high water
  const uint64_t before = g_allocations.load();
  for (int i = 0; i < 200'000; ++i) sim.Step();
  EXPECT_EQ(g_allocations.load() - before, 0u);
  EXPECT_EQ(sim.events_executed(), 400'000u);
}

}  // namespace
}  // namespace blkbench::engine
