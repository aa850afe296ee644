// Tests for the null_blk model: completion timing per irqmode and per-hctx accounting.
#include "engine/device/null_blk.h"

#include "engine/device/closed_loop_harness.h"
#include "gtest/gtest.h"

namespace blkbench::engine {
namespace {

DeviceRequest Rq(uint64_t id, uint32_t hw_queue = 0) {
  return DeviceRequest{id, id * 8, 8, false, hw_queue};
}

TEST(NullBlkTest, IrqModeNoneCompletesInline) {
  NullBlkConfig cfg;
  cfg.irqmode = NullBlkConfig::kIrqNone;
  NullBlkModel dev(cfg);
  EXPECT_EQ(dev.irqmode(), 0u);
  EXPECT_EQ(dev.NextCompletion(), kNever);
  dev.Submit(Rq(1), 5'000);
  EXPECT_EQ(dev.NextCompletion(), 5'000u);
  EXPECT_EQ(dev.in_flight(), 1u);
  std::vector<uint64_t> out;
  dev.CollectCompleted(5'000, &out);
  EXPECT_EQ(out, std::vector<uint64_t>{1});
  EXPECT_EQ(dev.in_flight(), 0u);
  EXPECT_EQ(dev.NextCompletion(), kNever);
}

TEST(NullBlkTest, SoftirqAddsFixedLatency) {
  NullBlkModel dev{NullBlkConfig{}};
  EXPECT_EQ(dev.irqmode(), 1u);
  dev.Submit(Rq(1), 100);
  dev.Submit(Rq(2), 200);
  EXPECT_EQ(dev.NextCompletion(), 100 + kNullBlkSoftirqLatency);
  std::vector<uint64_t> out;
  dev.CollectCompleted(100 + kNullBlkSoftirqLatency, &out);
  EXPECT_EQ(out, std::vector<uint64_t>{1});
  EXPECT_EQ(dev.NextCompletion(), 200 + kNullBlkSoftirqLatency);
}

TEST(NullBlkTest, TimerModeUsesCompletionNsec) {
  NullBlkConfig cfg;
  cfg.irqmode = NullBlkConfig::kIrqTimer;
  cfg.completion_nsec = 25'000;
  NullBlkModel dev(cfg);
  EXPECT_EQ(dev.completion_nsec(), 25'000u);
  auto r = RunClosedLoop(dev, 16, SequentialRequests(0, 8, false), 100, 10'000);
  EXPECT_DOUBLE_EQ(r.mean_latency_ns, 25'000);
  EXPECT_NEAR(r.iops, 16 / 25e-6, 16 / 25e-6 * 0.01);
  EXPECT_NEAR(r.iops * r.mean_latency_ns * 1e-9, 16, 0.02 * 16);  // Little's law
}

TEST(NullBlkTest, DepthIsPerHardwareQueue) {
  NullBlkConfig cfg;
  cfg.submit_queues = 4;
  cfg.hw_queue_depth = 2;
  NullBlkModel dev(cfg);
  EXPECT_EQ(dev.hw_queues(), 4u);
  EXPECT_EQ(dev.queue_depth(), 2u);
  // Two per hctx fills every hctx; completions come back in submission order.
  for (uint64_t i = 0; i < 8; ++i) dev.Submit(Rq(i, static_cast<uint32_t>(i % 4)), i);
  EXPECT_EQ(dev.in_flight(), 8u);
  std::vector<uint64_t> out;
  dev.CollectCompleted(3 + kNullBlkSoftirqLatency, &out);
  EXPECT_EQ(out, (std::vector<uint64_t>{0, 1, 2, 3}));
  EXPECT_EQ(dev.in_flight(), 4u);
}

TEST(NullBlkTest, ValidateRejectsBadConfig) {
  NullBlkConfig cfg;
  cfg.irqmode = 3;
  EXPECT_FALSE(cfg.Validate().ok());
  cfg = NullBlkConfig{};
  cfg.blocksize = 1'000;
  EXPECT_FALSE(cfg.Validate().ok());
  cfg = NullBlkConfig{};
  cfg.submit_queues = 0;
  EXPECT_FALSE(cfg.Validate().ok());
  EXPECT_TRUE(NullBlkConfig{}.Validate().ok());
}

}  // namespace
}  // namespace blkbench::engine
