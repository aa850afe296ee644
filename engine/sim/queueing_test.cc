// A toy M/M/1 queue built on the simulator: checks Little's law (throughput x mean
// latency = mean occupancy) and the textbook mean, and that the run is deterministic.
#include <cstdio>
#include <deque>

#include "engine/sim/rng.h"
#include "engine/sim/simulator.h"
#include "gtest/gtest.h"

namespace blkbench::engine {
namespace {

class MM1 : public EventHandler {
 public:
  enum Kind : uint32_t { kArrival, kDeparture };

  MM1(Simulator& sim, Rng rng, double mean_interarrival_ns, double mean_service_ns)
      : sim_(sim),
        arrivals_(rng.Fork(1)),
        service_(rng.Fork(2)),
        interarrival_(mean_interarrival_ns),
        service_mean_(mean_service_ns) {}

  void Start() { sim_.Schedule(NextGap(), this, kArrival, 0); }

  void OnEvent(uint32_t kind, uint64_t) override {
    Integrate();
    if (kind == kArrival) {
      queue_.push_back(sim_.now());
      if (queue_.size() == 1) StartService();
      sim_.ScheduleAfter(NextGap(), this, kArrival, 0);
    } else {
      latency_sum_ += static_cast<double>(sim_.now() - queue_.front());
      ++completed_;
      queue_.pop_front();
      if (!queue_.empty()) StartService();
    }
  }

  // Closes the occupancy integral at now().
  void Finish() { Integrate(); }

  double throughput() const { return completed_ / static_cast<double>(sim_.now()); }
  double mean_latency() const { return latency_sum_ / completed_; }
  double mean_occupancy() const { return area_ / static_cast<double>(sim_.now()); }
  uint64_t completed() const { return completed_; }

 private:
  SimTime NextGap() { return 1 + static_cast<SimTime>(arrivals_.Exponential(interarrival_)); }
  void StartService() {
    sim_.ScheduleAfter(1 + static_cast<SimTime>(service_.Exponential(service_mean_)), this,
                       kDeparture, 0);
  }
  void Integrate() {
    area_ += static_cast<double>(queue_.size()) * static_cast<double>(sim_.now() - last_);
    last_ = sim_.now();
  }

  Simulator& sim_;
  Rng arrivals_, service_;
  double interarrival_, service_mean_;
  std::deque<SimTime> queue_;
  SimTime last_ = 0;
  double area_ = 0, latency_sum_ = 0;
  uint64_t completed_ = 0;
};

TEST(QueueingTest, LittlesLawHoldsOnMM1) {
  Simulator sim;
  MM1 q(sim, Rng(2024), /*mean_interarrival_ns=*/1000, /*mean_service_ns=*/750);  // rho = 0.75
  q.Start();
  sim.RunUntil(Millis(400));
  q.Finish();
  const double l = q.mean_occupancy();
  const double little = q.throughput() * q.mean_latency();
  std::printf("M/M/1 rho=0.75: %lu done, L=%.3f, lambda*W=%.3f, theory L=3.000\n",
              static_cast<unsigned long>(q.completed()), l, little);
  EXPECT_GT(q.completed(), 300000u);
  EXPECT_NEAR(little / l, 1.0, 0.02);
  EXPECT_NEAR(l, 3.0, 0.3);  // rho / (1 - rho); sampling noise at rho 0.75 is ~5%
  EXPECT_NEAR(q.mean_latency(), 750.0 / 0.25, 300);
}

TEST(QueueingTest, SameSeedSameTraceDifferentSeedDifferentTrace) {
  auto run = [](uint64_t seed) {
    Simulator sim;
    MM1 q(sim, Rng(seed), 1000, 750);
    q.Start();
    sim.RunUntil(Millis(5));
    return sim.trace_hash();
  };
  EXPECT_EQ(run(7), run(7));
  EXPECT_NE(run(7), run(8));
}

}  // namespace
}  // namespace blkbench::engine
