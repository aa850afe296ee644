// Tests for the queued-spinlock model: FIFO grants, hand-off and miss costs by distance,
// statistics, trylock, collapse, and the §8 anchor on desktop-16.
#include "engine/sim/spinlock.h"

#include <cmath>
#include <cstdio>
#include <vector>

#include "engine/sim/rng.h"
#include "engine/sim/simulator.h"
#include "gtest/gtest.h"

namespace blkbench::engine {
namespace {

MachineProfile Desktop() {
  absl::StatusOr<MachineProfile> p = LoadMachineProfile("desktop-16");
  EXPECT_TRUE(p.ok()) << p.status();
  return *p;
}

MachineProfile DesktopNoCollapse() {
  MachineProfile p = Desktop();
  p.collapse.max_multiplier = 1.0;
  return p;
}

TEST(SpinlockTest, UncontendedCostsCriticalSectionPlusLockUnlock) {
  MachineProfile p = DesktopNoCollapse();
  Spinlock lock(p, *p.CostsOf("mq-deadline")->lock, "dd->lock");
  LockGrant g = lock.Acquire(1000, 0, 100);
  EXPECT_FALSE(g.contended);
  EXPECT_EQ(g.granted, 1000u);
  EXPECT_EQ(g.spin_ns, 0u);
  EXPECT_EQ(g.released, 1000u + 100 + p.coherence.lock_uncontended);
  EXPECT_FALSE(lock.IsLocked(g.released));
  EXPECT_TRUE(lock.IsLocked(g.released - 1));
}

TEST(SpinlockTest, ContendedAcquisitionsAreFifoWithDistanceDependentHandoff) {
  MachineProfile p = DesktopNoCollapse();
  Spinlock lock(p, *p.CostsOf("mq-deadline")->lock, "dd->lock");
  const SimTime cs = 100, work = cs + p.coherence.lock_uncontended;
  const double m = p.CostsOf("mq-deadline")->lock->missed_lines, h = p.handoff_transfers;
  LockGrant a = lock.Acquire(0, 0, cs);
  LockGrant b = lock.Acquire(10, 1, cs);  // same CCX as CPU 0
  LockGrant c = lock.Acquire(20, 8, cs);  // other CCD
  EXPECT_EQ(lock.WaitersAt(20), 2);
  EXPECT_TRUE(b.contended);
  EXPECT_TRUE(c.contended);
  const double x01 = static_cast<double>(p.LineTransferNs(0, 1));
  const double x18 = static_cast<double>(p.LineTransferNs(1, 8));
  EXPECT_EQ(b.granted, a.released + static_cast<SimTime>(std::llround(h * x01)));
  EXPECT_EQ(b.released, b.granted + work + static_cast<SimTime>(std::llround(m * x01)));
  EXPECT_EQ(c.granted, b.released + static_cast<SimTime>(std::llround(h * x18)));
  EXPECT_EQ(c.released, c.granted + work + static_cast<SimTime>(std::llround(m * x18)));
  EXPECT_EQ(c.spin_ns, c.granted - 20);
  // The cross-CCD hold is longer than the intra-CCX one.
  EXPECT_GT(c.released - c.granted, b.released - b.granted);

  const LockStats& s = lock.stats();
  EXPECT_EQ(s.acquisitions, 3u);
  EXPECT_EQ(s.contended, 2u);
  EXPECT_NEAR(s.contended_share(), 2.0 / 3, 1e-12);
  EXPECT_EQ(s.spin_ns, b.spin_ns + c.spin_ns);
  EXPECT_EQ(s.hold_ns,
            (a.released - a.granted) + (b.released - b.granted) + (c.released - c.granted));
  EXPECT_EQ(s.busy_ns, c.released);  // busy without a gap from 0
}

TEST(SpinlockTest, TryAcquireFailsWhileHeldOrQueued) {
  MachineProfile p = DesktopNoCollapse();
  Spinlock lock(p, *p.CostsOf("mq-deadline")->lock, "dd->lock");
  LockGrant a = lock.Acquire(0, 0, 100);
  EXPECT_FALSE(lock.TryAcquire(50, 1, 10).has_value());
  EXPECT_EQ(lock.FailedTryNs(8), p.LineTransferNs(0, 8));
  std::optional<LockGrant> b = lock.TryAcquire(a.released, 1, 10);
  ASSERT_TRUE(b.has_value());
  EXPECT_FALSE(b->contended);
  EXPECT_EQ(lock.stats().failed_try, 1u);
  EXPECT_EQ(lock.stats().acquisitions, 2u);
}

TEST(SpinlockTest, CollapseMultiplierRule) {
  MachineProfile p = Desktop();
  Spinlock lock(p, *p.CostsOf("mq-deadline")->lock, "dd->lock");
  const double max = p.collapse.max_multiplier;
  EXPECT_DOUBLE_EQ(lock.CollapseMultiplier(0.5, 100), 1.0);  // below onset
  EXPECT_DOUBLE_EQ(lock.CollapseMultiplier(1.0, 0), 1.0);    // nobody spinning
  EXPECT_GT(lock.CollapseMultiplier(0.9, 8), 1.0);
  EXPECT_LT(lock.CollapseMultiplier(0.9, 8), lock.CollapseMultiplier(1.0, 8));
  EXPECT_LT(lock.CollapseMultiplier(1.0, 4), lock.CollapseMultiplier(1.0, 32));
  EXPECT_NEAR(lock.CollapseMultiplier(1.0, static_cast<int>(p.collapse.half_waiters)),
              1.0 + (max - 1.0) / 2, 1e-12);
  EXPECT_LE(lock.CollapseMultiplier(1.0, 1 << 20), max);
}

// Closed loop: `contexts` contexts, each doing `think` ns of lock-free work on its CPU
// and then `cs.size()` lock takes back to back, forever. Reports lock-bound numbers.
class Hammer : public EventHandler {
 public:
  struct Result {
    double ios_per_sec;
    double cycle_ns;  // lock occupancy per acquisition
    double contended_share;
    double spin_share;  // spin / (spin + think + hold) across contexts
  };

  static Result Run(const MachineProfile& p, int contexts, SimTime think, std::vector<SimTime> cs,
                    SimTime duration) {
    Simulator sim;
    Spinlock lock(p, *p.CostsOf("mq-deadline")->lock, "dd->lock");
    Hammer h(sim, lock, p, contexts, think, std::move(cs));
    for (int i = 0; i < contexts; ++i) sim.Schedule(static_cast<SimTime>(i), &h, 0, i);
    // Warm up, then measure the steady state.
    sim.RunUntil(duration / 5);
    const LockStats s0 = lock.stats();
    const uint64_t ios0 = h.ios_;
    const SimTime think0 = h.think_total_;
    sim.RunUntil(duration);
    const LockStats& s = lock.stats();
    const SimTime window = duration - (duration / 5);
    const double secs = static_cast<double>(window) * 1e-9;
    const double acq = static_cast<double>(s.acquisitions - s0.acquisitions);
    const double spin = static_cast<double>(s.spin_ns - s0.spin_ns);
    const double hold = static_cast<double>(s.hold_ns - s0.hold_ns);
    return Result{static_cast<double>(h.ios_ - ios0) / secs,
                  static_cast<double>(s.busy_ns - s0.busy_ns) / acq,
                  static_cast<double>(s.contended - s0.contended) / acq,
                  spin / (spin + hold + static_cast<double>(h.think_total_ - think0))};
  }

  void OnEvent(uint32_t step, uint64_t ctx) override {
    const int cpu = static_cast<int>(ctx) % profile_.cpus();
    if (step == cs_.size()) {  // the I/O is done: think, then start the next one
      ++ios_;
      // +-50% jitter: without it the contexts fall into a fixed round-robin order in
      // which each lock passes to the neighbouring CPU, hiding the cross-CCD transfers.
      SimTime think = think_ / 2 + rng_.Uniform(think_ + 1);
      think_total_ += think;
      sim_.ScheduleAfter(think, this, 0, ctx);
      return;
    }
    LockGrant g = lock_.Acquire(sim_.now(), cpu, cs_[step]);
    sim_.Schedule(g.released, this, step + 1, ctx);
  }

 private:
  Hammer(Simulator& sim, Spinlock& lock, const MachineProfile& p, int contexts, SimTime think,
         std::vector<SimTime> cs)
      : sim_(sim), lock_(lock), profile_(p), think_(think), cs_(std::move(cs)) {
    (void)contexts;
  }

  Simulator& sim_;
  Spinlock& lock_;
  const MachineProfile& profile_;
  SimTime think_;
  std::vector<SimTime> cs_;
  uint64_t ios_ = 0;
  SimTime think_total_ = 0;
  Rng rng_{1};
};

std::vector<SimTime> DeadlineTakes(const MachineProfile& p) {
  // ~3 takes per I/O (ENGINE.md §8 anchor): bio_merge, insert, dispatch.
  return {p.stage.elevator_bio_merge, p.stage.elevator_insert, p.CostsOf("mq-deadline")->dispatch};
}

SimTime LockFreeWork(const MachineProfile& p) {
  return p.stage.submit + p.stage.request_alloc + p.stage.tag_get_single + p.stage.driver_queue_rq +
         p.stage.completion;
}

TEST(SpinlockTest, CollapseMakesThroughputFallWithMoreContexts) {
  // Uniform transfer cost, so that only the collapse rule (not the topology: more
  // contexts also means more cross-CCD hand-offs) depends on the number of contexts.
  MachineProfile p = Desktop();
  p.coherence.same_core = p.coherence.same_ccx = p.coherence.same_node = 40;
  MachineProfile flat = p;
  flat.collapse.max_multiplier = 1.0;
  const SimTime think = LockFreeWork(p);
  std::vector<double> with, without;
  for (int n : {1, 8, 16, 32}) {
    with.push_back(Hammer::Run(p, n, think, DeadlineTakes(p), Millis(10)).ios_per_sec);
    without.push_back(Hammer::Run(flat, n, think, DeadlineTakes(p), Millis(10)).ios_per_sec);
    std::printf("contexts %2d: %8.0f IOPS with collapse, %8.0f without\n", n, with.back(),
                without.back());
  }
  EXPECT_NEAR(with[0], without[0], 1);              // one context never contends
  EXPECT_NEAR(without[3] / without[2], 1.0, 0.05);  // no collapse: a plateau
  EXPECT_LT(with[2], 0.97 * with[1]);               // collapse: 8 -> 16 -> 32 falls
  EXPECT_LT(with[3], 0.97 * with[2]);
  EXPECT_LT(with[3], 0.8 * without[3]);
}

TEST(SpinlockTest, Desktop16ScalingCurve) {
  // Informational curve on the real topology, plus the one property that must hold:
  // past saturation adding contexts does not help.
  MachineProfile p = Desktop();
  std::vector<double> iops;
  for (int n : {1, 4, 8, 16, 32}) {
    iops.push_back(Hammer::Run(p, n, LockFreeWork(p), DeadlineTakes(p), Millis(10)).ios_per_sec);
    std::printf("desktop-16, %2d contexts: %8.0f IOPS\n", n, iops.back());
  }
  EXPECT_GT(iops[1], iops[0]);
  EXPECT_LT(iops[4], iops[2]);
}

TEST(SpinlockTest, AnchorCycleOnDesktop16) {
  // ENGINE.md §8: 32 threads, ~3 lock takes per I/O, baseline 879K IOPS, ~94% spinning
  // => ~380 ns per acquisition cycle.
  MachineProfile p = Desktop();
  Hammer::Result r = Hammer::Run(p, 32, LockFreeWork(p), DeadlineTakes(p), Millis(5));
  std::printf(
      "anchor desktop-16: cycle %.0f ns/acquisition, %.0f IOPS, contended %.1f%%, "
      "spinning %.1f%% of context time (paper: ~380 ns, 879K, 93.6%%, ~94%%)\n",
      r.cycle_ns, r.ios_per_sec, 100 * r.contended_share, 100 * r.spin_share);
  EXPECT_GT(r.cycle_ns, 150);
  EXPECT_LT(r.cycle_ns, 1500);
  EXPECT_GT(r.contended_share, 0.8);
  EXPECT_GT(r.spin_share, 0.7);
}

}  // namespace
}  // namespace blkbench::engine
