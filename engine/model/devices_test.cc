// Tests of one job driving several devices (engine.devices, file_service_type): each
// device its own queue, fio's roundrobin and random file switching, t/io_uring's rules,
// per-device plug caches and sequential streams, and the cases the model refuses.
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "engine/model/engine.h"
#include "engine/model/engine_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace blkbench::engine {
namespace {

using test::Cell;
using test::In;
using test::Ios;
using test::RunCell;
using ::testing::HasSubstr;

// null_blk that completes every request `ns` after issue, one hardware queue of `depth`
// tags, driven by one io_uring job of `iodepth` over `devices` devices.
v1::CellSpec Timed(uint32_t devices, uint32_t iodepth, uint32_t depth, const std::string& fst) {
  v1::CellSpec cell = Cell("null_blk", v1::RANDREAD, 4096, iodepth, 1, 20'000'000);
  auto& p = *cell.mutable_device_params();
  p["null_blk.irqmode"] = "2";
  p["null_blk.completion_nsec"] = "100000";
  p["null_blk.hw_queue_depth"] = std::to_string(depth);
  p["engine.devices"] = std::to_string(devices);
  if (!fst.empty()) cell.mutable_job()->set_file_service_type(fst);
  return cell;
}

struct Issue {
  int pid = 0;
  int minor = 0;  // the device
  uint64_t sector = 0;
};

// Every D event of a run of `cell`, in order.
std::vector<Issue> Trace(const v1::CellSpec& cell) {
  absl::StatusOr<EngineConfig> config = DeriveConfig(cell);
  EXPECT_TRUE(config.ok()) << config.status();
  if (!config.ok()) return {};
  absl::StatusOr<std::unique_ptr<Engine>> e = Engine::Create(*config, 0);
  EXPECT_TRUE(e.ok()) << e.status();
  if (!e.ok()) return {};
  std::ostringstream out;
  (*e)->set_trace_sink(&out);
  const SimTime end = (*e)->time_limit();
  while ((*e)->now() < end && !(*e)->stalled()) (*e)->RunUntil((*e)->now() + 1'000'000);
  std::vector<Issue> issues;
  std::istringstream in(out.str());
  std::string devno, cpu, seq, time, pid, action, rwbs;
  uint64_t sector = 0;
  std::string rest;
  while (in >> devno >> cpu >> seq >> time >> pid >> action >> rwbs >> sector) {
    std::getline(in, rest);
    if (action != "D") continue;
    issues.push_back({std::stoi(pid), std::stoi(devno.substr(devno.find(',') + 1)), sector});
  }
  return issues;
}

// Lengths of the runs of consecutive issues to one device.
std::vector<size_t> Runs(const std::vector<Issue>& issues) {
  std::vector<size_t> runs;
  for (size_t i = 0; i < issues.size(); ++i) {
    if (i == 0 || issues[i].minor != issues[i - 1].minor) runs.push_back(0);
    ++runs.back();
  }
  return runs;
}

TEST(DevicesTest, EachDeviceHasItsOwnTagsSoTwoDoubleATagBoundJob) {
  // 8 tags per device, 100 us per request: one device keeps 8 in flight (80k IOPS) of the
  // job's 16; two keep all 16.
  const v1::RunResult one = RunCell(Timed(1, 16, 8, ""));
  const v1::RunResult two = RunCell(Timed(2, 16, 8, ""));
  EXPECT_NEAR(one.iops(), 8 / 100e-6, 0.02 * 8 / 100e-6);
  EXPECT_NEAR(two.iops(), 16 / 100e-6, 0.02 * 16 / 100e-6);
  EXPECT_GT(In(one, "tags.waits"), 0);
  EXPECT_EQ(In(two, "tags.waits"), 0);
}

TEST(DevicesTest, RoundRobinSwitchesDeviceEveryNIos) {
  for (const auto& [fst, n] : std::vector<std::pair<std::string, size_t>>{
           {"", 1}, {"roundrobin", 1}, {"roundrobin:4", 4}}) {
    const std::vector<Issue> issues = Trace(Timed(2, 16, 64, fst));
    ASSERT_GT(issues.size(), 1000u) << fst;
    std::map<int, size_t> per_device;
    for (const Issue& i : issues) ++per_device[i.minor];
    EXPECT_EQ(per_device.size(), 2u) << fst;
    EXPECT_NEAR(static_cast<double>(per_device[0]), static_cast<double>(per_device[1]), 2.0 * n);
    const std::vector<size_t> runs = Runs(issues);
    // Issue order is submission order here (no elevator, one CPU): every run but the
    // last is exactly n long.
    for (size_t r = 0; r + 1 < runs.size(); ++r) ASSERT_EQ(runs[r], n) << fst << " run " << r;
  }
}

TEST(DevicesTest, RandomFileServiceUsesEveryDeviceInNoFixedOrder) {
  const std::vector<Issue> issues = Trace(Timed(4, 16, 64, "random"));
  std::map<int, size_t> per_device;
  for (const Issue& i : issues) ++per_device[i.minor];
  ASSERT_EQ(per_device.size(), 4u);
  for (const auto& [dev, n] : per_device) {
    EXPECT_NEAR(static_cast<double>(n), issues.size() / 4.0, 0.05 * issues.size()) << dev;
  }
  const std::vector<size_t> runs = Runs(issues);
  EXPECT_GT(*std::max_element(runs.begin(), runs.end()), 1u);  // the same file drawn again
}

TEST(DevicesTest, TIoUringStaysOnADeviceUntilItHoldsItsShareOfTheDepth) {
  // iodepth 16 over 2 devices: file_depth 8. The job fills device 0 with 8, moves to
  // device 1, and after each reap refills whichever it is on until that one holds 8.
  v1::CellSpec cell = Timed(2, 16, 64, "t/io_uring");
  cell.mutable_job()->set_iodepth_batch_submit(8);
  cell.mutable_job()->set_iodepth_batch_complete_min(8);
  const std::vector<Issue> issues = Trace(cell);
  ASSERT_GT(issues.size(), 1000u);
  const std::vector<size_t> runs = Runs(issues);
  for (size_t r = 0; r + 1 < runs.size(); ++r) ASSERT_EQ(runs[r], 8u) << "run " << r;
}

TEST(DevicesTest, TIoUringDealsTheDevicesToTheThreads) {
  v1::CellSpec cell = Timed(4, 16, 64, "t/io_uring");
  cell.mutable_job()->set_numjobs(2);
  cell.mutable_job()->set_thread(true);
  std::map<int, std::map<int, size_t>> by_pid;  // pid -> device -> issues
  for (const Issue& i : Trace(cell)) ++by_pid[i.pid][i.minor];
  ASSERT_EQ(by_pid.size(), 2u);
  // Thread 0 drives devices 0 and 2, thread 1 devices 1 and 3 (file f to thread f % 2).
  const auto devices = [&](int pid) {
    std::vector<int> d;
    for (const auto& [dev, n] : by_pid[pid]) d.push_back(dev);
    return d;
  };
  EXPECT_EQ(devices(by_pid.begin()->first), (std::vector<int>{0, 2}));
  EXPECT_EQ(devices(std::next(by_pid.begin())->first), (std::vector<int>{1, 3}));
  // fio's roundrobin opens every file in every job instead.
  cell.mutable_job()->set_file_service_type("roundrobin");
  by_pid.clear();
  for (const Issue& i : Trace(cell)) ++by_pid[i.pid][i.minor];
  for (const auto& [pid, devs] : by_pid) EXPECT_EQ(devs.size(), 4u) << pid;
}

TEST(DevicesTest, APlugsCachedTagsServeOnlyTheirOwnDevice) {
  // A plug of 8 batch-allocates 8 tags on the device of its first bio. Alternating
  // devices, every other bio finds the cache's head on the other device and allocates
  // a single tag (blk_mq_peek_cached_request: rq->q != q); switching every 8 I/Os,
  // each plug stays on one device and needs no single allocation.
  v1::CellSpec cell = Timed(2, 16, 64, "roundrobin");
  cell.mutable_job()->set_iodepth_batch_submit(8);
  cell.mutable_job()->set_iodepth_batch_complete_min(8);
  const v1::RunResult alternate = RunCell(cell);
  cell.mutable_job()->set_file_service_type("roundrobin:8");
  const v1::RunResult batches = RunCell(cell);
  const auto per_io = [](const v1::RunResult& r, const std::string& k) {
    return In(r, k) / static_cast<double>(Ios(r));
  };
  EXPECT_NEAR(per_io(alternate, "tags.single_allocs"), 0.5, 0.02);
  EXPECT_NEAR(per_io(batches, "tags.single_allocs"), 0.0, 0.01);
}

TEST(DevicesTest, EachDeviceKeepsItsOwnSequentialStream) {
  v1::CellSpec cell = Timed(2, 16, 64, "roundrobin");
  cell.mutable_job()->set_rw(v1::READ);
  const std::vector<Issue> issues = Trace(cell);
  ASSERT_GT(issues.size(), 1000u);
  std::map<int, uint64_t> next;  // device -> where its stream continues
  size_t sequential = 0;
  for (const Issue& i : issues) {
    if (next.count(i.minor) != 0 && next[i.minor] == i.sector) ++sequential;
    next[i.minor] = i.sector + 8;
  }
  EXPECT_EQ(sequential, issues.size() - 2);  // all but each device's first
  EXPECT_GT(In(RunCell(cell), "seq_ratio"), 0.99);
}

TEST(DevicesTest, SeveralDevicesNeedNoneAndNoPerLunBudget) {
  v1::CellSpec cell = Timed(2, 16, 64, "");
  cell.mutable_queue()->set_scheduler("mq-deadline");
  absl::StatusOr<EngineConfig> c = DeriveConfig(cell);
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(c.status().message(), HasSubstr("engine.devices 2 needs scheduler none"));
  v1::CellSpec hdd = Cell("hdd", v1::RANDREAD, 4096, 4, 1, 1'000'000);
  (*hdd.mutable_device_params())["engine.devices"] = "2";
  c = DeriveConfig(hdd);
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(c.status().message(), HasSubstr("without a per-LUN budget"));
  (*cell.mutable_device_params())["engine.devices"] = "65";
  cell.mutable_queue()->clear_scheduler();
  c = DeriveConfig(cell);
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(c.status().message(), HasSubstr("is not from 1 to 64"));
}

TEST(DevicesTest, OneDeviceIsTheDefaultAndRunsAsBefore) {
  v1::CellSpec cell = Timed(1, 16, 8, "");
  const v1::RunResult one = RunCell(cell);
  cell.mutable_device_params()->erase("engine.devices");
  cell.mutable_job()->set_file_service_type("roundrobin:7");  // no effect on one file
  const v1::RunResult unset = RunCell(cell);
  EXPECT_EQ(In(one, "engine.trace_hash"), In(unset, "engine.trace_hash"));
}

}  // namespace
}  // namespace blkbench::engine
