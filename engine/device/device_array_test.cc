// Tests for DeviceArray: routing by hardware queue and completions in time order over the
// devices.
#include "engine/device/device_array.h"

#include "engine/device/null_blk.h"
#include "gtest/gtest.h"

namespace blkbench::engine {
namespace {

std::unique_ptr<DeviceModel> Timer(SimTime ns, uint32_t queues) {
  NullBlkConfig cfg;
  cfg.irqmode = NullBlkConfig::kIrqTimer;
  cfg.completion_nsec = ns;
  cfg.submit_queues = queues;
  cfg.hw_queue_depth = 4;
  return std::make_unique<NullBlkModel>(cfg);
}

DeviceArray Two(SimTime first_ns, SimTime second_ns) {
  std::vector<std::unique_ptr<DeviceModel>> d;
  d.push_back(Timer(first_ns, 2));
  d.push_back(Timer(second_ns, 2));
  return DeviceArray(std::move(d));
}

TEST(DeviceArrayTest, EachDeviceOwnsItsHardwareQueues) {
  DeviceArray a = Two(1'000, 1'000);
  EXPECT_EQ(a.size(), 2u);
  EXPECT_EQ(a.per_device_queues(), 2u);
  EXPECT_EQ(a.hw_queues(), 4u);
  EXPECT_EQ(a.queue_depth(), 4u);
  // Array queue 3 is device 1's queue 1: the depth is per device and queue.
  for (uint64_t id = 0; id < 4; ++id) a.Submit({id, id * 8, 8, false, 3}, 0);
  EXPECT_EQ(a.device(0).in_flight(), 0u);
  EXPECT_EQ(a.device(1).in_flight(), 4u);
  EXPECT_EQ(a.in_flight(), 4u);
}

TEST(DeviceArrayTest, CompletionsComeOutInTimeOrderOverTheDevices) {
  DeviceArray a = Two(/*first_ns=*/3'000, /*second_ns=*/1'000);
  a.Submit({10, 0, 8, false, 0}, 0);      // device 0: done at 3000
  a.Submit({11, 8, 8, false, 1}, 1'500);  // device 0: done at 4500
  a.Submit({20, 0, 8, false, 2}, 1'000);  // device 1: done at 2000
  a.Submit({21, 8, 8, false, 3}, 2'500);  // device 1: done at 3500
  EXPECT_EQ(a.NextCompletion(), 2'000u);
  std::vector<uint64_t> out;
  a.CollectCompleted(3'999, &out);
  EXPECT_EQ(out, (std::vector<uint64_t>{20, 10, 21}));
  EXPECT_EQ(a.NextCompletion(), 4'500u);
  a.CollectCompleted(4'500, &out);
  EXPECT_EQ(out, (std::vector<uint64_t>{20, 10, 21, 11}));
  EXPECT_EQ(a.NextCompletion(), kNever);
  EXPECT_EQ(a.in_flight(), 0u);
}

TEST(DeviceArrayTest, SimultaneousCompletionsGoLowerDeviceFirst) {
  DeviceArray a = Two(1'000, 1'000);
  a.Submit({2, 0, 8, false, 2}, 0);
  a.Submit({1, 0, 8, false, 0}, 0);
  std::vector<uint64_t> out;
  a.CollectCompleted(1'000, &out);
  EXPECT_EQ(out, (std::vector<uint64_t>{1, 2}));
}

}  // namespace
}  // namespace blkbench::engine
