// The internal-key mapping: known keys get their names, units and labels; unknown keys
// follow their suffix; every key an engine run really reports maps to a valid,
// conflict-free metric (names unique per type), and hashes are dropped.
#include "controller/metrics/engine_metrics.h"

#include <map>
#include <regex>

#include "engine/model/engine_runner.h"
#include "gtest/gtest.h"
#include "workloads/matrix.h"

namespace blkbench {
namespace {

TEST(EngineMetricsTest, KnownKeysHaveUnitsAndLabels) {
  auto cpu = EngineMetricFor("cpu_ns_per_io.dispatch");
  ASSERT_TRUE(cpu.has_value());
  EXPECT_EQ(cpu->name, "blkbench_engine_cpu_seconds_per_io");
  EXPECT_EQ(cpu->label, "stage");
  EXPECT_EQ(cpu->label_value, "dispatch");
  EXPECT_DOUBLE_EQ(cpu->scale, 1e-9);
  auto lock = EngineMetricFor("lock.dd_lock.contended_share");
  ASSERT_TRUE(lock.has_value());
  EXPECT_EQ(lock->name, "blkbench_engine_lock_contended_ratio");
  EXPECT_EQ(lock->label_value, "dd_lock");
  auto waits = EngineMetricFor("tags.waits");
  ASSERT_TRUE(waits.has_value());
  EXPECT_EQ(waits->name, "blkbench_engine_tag_waits_total");
  EXPECT_EQ(waits->type, EngineMetric::Type::kCounter);
  EXPECT_FALSE(EngineMetricFor("engine.trace_hash").has_value());
  EXPECT_FALSE(EngineMetricFor("executor.ring_flags").has_value());
}

TEST(EngineMetricsTest, UnknownKeysFollowTheirSuffix) {
  EXPECT_EQ(EngineMetricFor("engine.wall_ns")->name, "blkbench_engine_engine_wall_seconds");
  EXPECT_DOUBLE_EQ(EngineMetricFor("engine.wall_ns")->scale, 1e-9);
  EXPECT_EQ(EngineMetricFor("foo.hit_ratio")->name, "blkbench_engine_foo_hit_ratio");
  EXPECT_EQ(EngineMetricFor("inflight.mean")->name, "blkbench_engine_inflight_mean");
  EXPECT_EQ(EngineMetricFor("inflight.mean")->type, EngineMetric::Type::kGauge);
  EXPECT_EQ(EngineMetricFor("dispatch.requeues")->name, "blkbench_engine_dispatch_requeues_total");
  EXPECT_EQ(EngineMetricFor("Weird-Key.x")->name, "blkbench_engine_weird_key_x_total");
  auto hold = EngineMetricFor("lock.bfqd_lock.hold_ns_per_acquisition");
  ASSERT_TRUE(hold.has_value());
  EXPECT_EQ(hold->name, "blkbench_engine_lock_hold_seconds_per_acquisition");
  EXPECT_EQ(hold->type, EngineMetric::Type::kGauge);
  EXPECT_DOUBLE_EQ(hold->scale, 1e-9);
  EXPECT_EQ(hold->label_value, "bfqd_lock");
}

// Every internal of real engine runs (none and each elevator) maps to a valid name, and
// no name is used with two types or two label sets (the registry would refuse it).
TEST(EngineMetricsTest, EveryKeyOfRealRunsMapsToAValidConflictFreeMetric) {
  const std::regex valid("blkbench_engine_[a-z0-9_]+");
  std::map<std::string, std::pair<EngineMetric::Type, std::string>> seen;
  for (const char* sched : {"none", "mq-deadline", "bfq", "kyber"}) {
    auto m = workloads::ParseMatrix(std::string(R"(name: m
job: {rw: randread, bs: 4k, iodepth: 8, numjobs: 2, ioengine: io_uring, runtime: 5ms,
      time_based: 1, randseed: 3, scheduler: )") +
                                        sched + R"(}
target: {device_class: sim:null_blk, kernel: "sim:6.16"}
)",
                                    "m.yaml");
    ASSERT_TRUE(m.ok()) << m.status();
    RunContext ctx;
    ctx.cell = m->cells[0];
    ctx.target_path = "sim:null_blk";
    ctx.target_size = engine::kSimulatedDeviceBytes;
    auto result = engine::NewEngineRunner()->Run(ctx);
    ASSERT_TRUE(result.ok()) << result.status();
    ASSERT_GT(result->internals_size(), 10);
    for (const auto& [key, value] : result->internals()) {
      std::optional<EngineMetric> metric = EngineMetricFor(key);
      if (!metric.has_value()) continue;
      EXPECT_TRUE(std::regex_match(metric->name, valid)) << key << " -> " << metric->name;
      // promtool: no abbreviated units in names.
      EXPECT_FALSE(std::regex_search(metric->name, std::regex("_(ns|us|ms)(_|$)")))
          << key << " -> " << metric->name;
      auto [it, inserted] = seen.try_emplace(metric->name, metric->type, metric->label);
      EXPECT_TRUE(it->second == std::make_pair(metric->type, metric->label))
          << key << " -> " << metric->name << " conflicts";
    }
  }
}

}  // namespace
}  // namespace blkbench
