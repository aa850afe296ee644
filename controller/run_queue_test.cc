// RunQueue: placement order (runs by id, devices in the order given, one run per
// device), keys by class and kernel glob, runs no device can take, and the check's
// verdicts; each pass compared with matching every queued run in id order.
#include "controller/run_queue.h"

#include <algorithm>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "common/placement.h"
#include "gtest/gtest.h"

namespace blkbench {
namespace {

struct Device {
  std::string device_class;
  std::string kernel_release;
};

std::vector<FreeDevice> Offer(const std::vector<Device>& devices) {
  std::vector<FreeDevice> out;
  for (const Device& d : devices) out.push_back({&d.device_class, &d.kernel_release});
  return out;
}

RunQueue::Verdict TakeAll(const QueuedRun&) { return RunQueue::Verdict::kTake; }

// (run id, device index) of each pick, in pick order.
std::vector<std::pair<uint64_t, size_t>> Placed(const std::vector<RunQueue::Pick>& picks) {
  std::vector<std::pair<uint64_t, size_t>> out;
  for (const RunQueue::Pick& p : picks) out.emplace_back(p.run.run_id, p.device);
  return out;
}

using Placement = std::vector<std::pair<uint64_t, size_t>>;

TEST(RunQueueTest, RunsGoInIdOrderToTheFirstMatchingDeviceOnePerDevice) {
  RunQueue q;
  const PlacementKey ssd{"ssd", ""};
  const PlacementKey hdd{"hdd", ""};
  q.Add(ssd, {5, 1, 0});
  q.Add(hdd, {2, 1, 1});
  q.Add(ssd, {3, 1, 0});
  q.Add(ssd, {9, 2, 0});
  EXPECT_EQ(q.size(), 4u);
  EXPECT_EQ(q.keys(), 2u);
  const std::vector<Device> devices = {{"ssd", "6.1"}, {"hdd", "6.1"}, {"ssd", "6.1"}};
  EXPECT_EQ(Placed(q.Choose(Offer(devices), TakeAll)),
            (Placement{{2, 1}, {3, 0}, {5, 2}}));  // run 9 waits: no ssd left
  EXPECT_EQ(q.size(), 4u) << "picked runs stay queued until removed";
}

TEST(RunQueueTest, KernelGlobsSimulatedAndEmptyKernels) {
  RunQueue q;
  q.Add({"ssd", "6.10*"}, {1, 1, 0});
  q.Add({"ssd", "sim:6.10+patch"}, {2, 1, 1});
  q.Add({"ssd", ""}, {3, 1, 2});
  q.Add({"ssd", "5.*"}, {4, 1, 3});
  const std::vector<Device> old_host = {{"ssd", "6.1.0"}, {"ssd", "6.1.0"}, {"ssd", "6.1.0"}};
  EXPECT_EQ(Placed(q.Choose(Offer(old_host), TakeAll)), (Placement{{2, 0}, {3, 1}}));
  const std::vector<Device> new_host = {{"ssd", "6.10.3"}};
  EXPECT_EQ(Placed(q.Choose(Offer(new_host), TakeAll)), (Placement{{1, 0}}));
  const std::vector<Device> other_class = {{"nvme", "6.10.3"}, {"nvme", "5.4"}};
  EXPECT_TRUE(q.Choose(Offer(other_class), TakeAll).empty());
}

TEST(RunQueueTest, AKeyNoFreeDeviceMatchesNeverHoldsUpLaterRuns) {
  RunQueue q;
  for (uint64_t id = 1; id <= 1000; ++id) q.Add({"nomatch", ""}, {id, 1, 0});
  q.Add({"ssd", ""}, {1001, 2, 0});
  int checked = 0;
  auto counting = [&](const QueuedRun&) {
    ++checked;
    return RunQueue::Verdict::kTake;
  };
  const std::vector<Device> devices = {{"ssd", "6.1"}, {"hdd", "6.1"}};
  EXPECT_EQ(Placed(q.Choose(Offer(devices), counting)), (Placement{{1001, 0}}));
  EXPECT_EQ(checked, 1) << "runs of a key no device matches are never looked at";
}

TEST(RunQueueTest, RemoveTakesOneRunAndDropsAnEmptyKey) {
  RunQueue q;
  const PlacementKey key{"ssd", ""};
  q.Add(key, {1, 1, 0});
  q.Add(key, {1, 1, 0});  // queued already: no second entry
  q.Add(key, {2, 1, 0});
  EXPECT_EQ(q.size(), 2u);
  EXPECT_FALSE(q.Remove({"hdd", ""}, 1));
  EXPECT_FALSE(q.Remove(key, 7));
  EXPECT_TRUE(q.Remove(key, 1));
  EXPECT_FALSE(q.Remove(key, 1));
  EXPECT_TRUE(q.Remove(key, 2));
  EXPECT_EQ(q.size(), 0u);
  EXPECT_EQ(q.keys(), 0u);
  const std::vector<Device> devices = {{"ssd", "6.1"}};
  EXPECT_TRUE(q.Choose(Offer(devices), TakeAll).empty());
}

TEST(RunQueueTest, GoneRunsAreDroppedAndTheirDeviceGoesToTheNextRun) {
  RunQueue q;
  const PlacementKey key{"ssd", ""};
  for (uint64_t id = 1; id <= 4; ++id) q.Add(key, {id, 1, 0});
  auto odd_gone = [](const QueuedRun& r) {
    return r.run_id % 2 == 1 ? RunQueue::Verdict::kGone : RunQueue::Verdict::kTake;
  };
  const std::vector<Device> devices = {{"ssd", "6.1"}, {"ssd", "6.1"}};
  EXPECT_EQ(Placed(q.Choose(Offer(devices), odd_gone)), (Placement{{2, 0}, {4, 1}}));
  EXPECT_EQ(q.size(), 2u);  // 1 and 3 dropped; 2 and 4 wait for Remove
  EXPECT_FALSE(q.Remove(key, 1));
  EXPECT_TRUE(q.Remove(key, 2));
}

TEST(RunQueueTest, StopEndsThePassAndKeepsTheRun) {
  RunQueue q;
  const PlacementKey key{"ssd", ""};
  for (uint64_t id = 1; id <= 3; ++id) q.Add(key, {id, 1, 0});
  auto stop_at_2 = [](const QueuedRun& r) {
    return r.run_id == 2 ? RunQueue::Verdict::kStop : RunQueue::Verdict::kTake;
  };
  const std::vector<Device> devices = {{"ssd", "6.1"}, {"ssd", "6.1"}, {"ssd", "6.1"}};
  EXPECT_EQ(Placed(q.Choose(Offer(devices), stop_at_2)), (Placement{{1, 0}}));
  EXPECT_EQ(q.size(), 3u);
}

// The order the controller placed runs in before the queue existed: every queued run in
// id order, each to the first free device it matches (DeviceMatches).
Placement ScanAll(const std::vector<std::pair<PlacementKey, uint64_t>>& runs,
                  const std::vector<Device>& devices) {
  std::vector<std::pair<PlacementKey, uint64_t>> sorted = runs;
  std::sort(sorted.begin(), sorted.end(),
            [](const auto& a, const auto& b) { return a.second < b.second; });
  std::vector<bool> taken(devices.size(), false);
  Placement out;
  for (const auto& [key, id] : sorted) {
    v1::CellSpec cell;
    cell.mutable_target()->set_device_class(key.device_class);
    cell.mutable_target()->set_kernel(key.kernel);
    for (size_t i = 0; i < devices.size(); ++i) {
      v1::AgentInfo agent;
      agent.mutable_host()->set_kernel_release(devices[i].kernel_release);
      v1::DeviceFacts dev;
      dev.set_device_class(devices[i].device_class);
      if (!taken[i] && DeviceMatches(cell, agent, dev)) {
        taken[i] = true;
        out.emplace_back(id, i);
        break;
      }
    }
  }
  return out;
}

TEST(RunQueueTest, ChoosesWhatMatchingEveryQueuedRunInIdOrderChose) {
  const std::vector<PlacementKey> keys = {{"ssd", ""},      {"ssd", "6.1*"}, {"ssd", "6.10*"},
                                          {"hdd", ""},      {"hdd", "5.*"},  {"nvme", ""},
                                          {"ssd", "sim:x"}, {"nomatch", ""}};
  const std::vector<std::string> classes = {"ssd", "hdd", "nvme"};
  const std::vector<std::string> kernels = {"6.1.0", "6.10.2", "5.4.0"};
  std::mt19937 rng(12345);  // deterministic
  for (int round = 0; round < 200; ++round) {
    RunQueue q;
    std::vector<std::pair<PlacementKey, uint64_t>> runs;
    const int n = 1 + static_cast<int>(rng() % 60);
    for (int i = 0; i < n; ++i) {
      const PlacementKey& key = keys[rng() % keys.size()];
      const uint64_t id = 1 + rng() % 10'000;
      if (std::find_if(runs.begin(), runs.end(), [&](const auto& r) { return r.second == id; }) !=
          runs.end()) {
        continue;
      }
      runs.emplace_back(key, id);
      q.Add(key, {id, 1, 0});
    }
    std::vector<Device> devices;
    const int d = static_cast<int>(rng() % 12);
    for (int i = 0; i < d; ++i) {
      devices.push_back({classes[rng() % classes.size()], kernels[rng() % kernels.size()]});
    }
    EXPECT_EQ(Placed(q.Choose(Offer(devices), TakeAll)), ScanAll(runs, devices))
        << "round " << round;
  }
}

}  // namespace
}  // namespace blkbench
