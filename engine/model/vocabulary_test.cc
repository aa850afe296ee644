// The engine models exactly the schedulers, devices and machine profiles that
// common/sim_vocabulary.h lists (and so the matrix parser accepts).
#include <algorithm>
#include <set>
#include <string>
#include <string_view>

#include "common/iosched_tunables.h"
#include "common/sim_vocabulary.h"
#include "engine/model/config.h"
#include "engine/model/elevator_registry.h"
#include "engine/model/engine.h"
#include "engine/model/engine_test_util.h"
#include "engine/sim/machine_profile.h"
#include "gtest/gtest.h"

namespace blkbench::engine {
namespace {

EngineConfig NullBlkConfig() {
  absl::StatusOr<EngineConfig> c =
      DeriveConfig(test::Cell("null_blk", v1::RANDREAD, 4096, 4, 1, 1'000'000));
  EXPECT_TRUE(c.ok()) << c.status();
  return c.ok() ? *c : EngineConfig{};
}

TEST(VocabularyTest, EveryListedSchedulerIsModelledAndNoOther) {
  for (std::string_view name : Schedulers()) {
    EngineConfig c = NullBlkConfig();
    c.queue.scheduler = std::string(name);
    absl::StatusOr<std::unique_ptr<Engine>> engine = Engine::Create(c, 0);
    EXPECT_TRUE(engine.ok()) << name << ": " << engine.status();
  }
  for (const char* other : {"cfq", "deadline", "noop", "mq-deadline-nodefault"}) {
    EngineConfig c = NullBlkConfig();
    c.queue.scheduler = other;
    EXPECT_FALSE(Engine::Create(c, 0).ok()) << other;
  }
}

// What a scheduler's factory reads is what the vocabulary says it has: its patch flags
// (PatchFlagDef.schedulers) and its tunables (IoschedTunableDef.scheduler), no more, no
// fewer; the core's flags are the ones that name no scheduler.
TEST(VocabularyTest, EachSchedulerReadsExactlyItsPatchFlagsAndTunables) {
  for (const ElevatorType& type : ElevatorRegistry::Builtin().types()) {
    std::set<std::string_view> patches, tunables;
    for (const PatchFlagDef& f : PatchFlags()) {
      if (std::find(f.schedulers.begin(), f.schedulers.end(), type.name) != f.schedulers.end()) {
        patches.insert(f.name);
      }
    }
    for (const IoschedTunableDef& t : IoschedTunables()) {
      if (t.scheduler == type.name) tunables.insert(t.name);
    }
    EXPECT_EQ(std::set<std::string_view>(type.patches.begin(), type.patches.end()), patches)
        << type.name;
    EXPECT_EQ(std::set<std::string_view>(type.tunables.begin(), type.tunables.end()), tunables)
        << type.name;
  }
  for (const PatchFlagDef& f : PatchFlags()) {
    if (!f.schedulers.empty()) continue;
    // A core flag sets a KernelSpec field (config_test.cc checks which).
    EXPECT_TRUE(ParseKernel("sim:6.16+" + std::string(f.name)).ok()) << f.name;
  }
}

// Every shipped machine profile has the costs of every registered scheduler, under its
// name; a profile without them is refused by name when the cell needs them.
TEST(VocabularyTest, EveryProfileCostsEveryScheduler) {
  for (const MachineProfileDef& m : MachineProfiles()) {
    absl::StatusOr<MachineProfile> p = LoadMachineProfile(m.name);
    ASSERT_TRUE(p.ok()) << p.status();
    for (const ElevatorType& type : ElevatorRegistry::Builtin().types()) {
      const SchedulerCosts* costs = p->CostsOf(type.name);
      ASSERT_NE(costs, nullptr) << m.name << " " << type.name;
      EXPECT_GT(costs->dispatch, 0u) << m.name << " " << type.name;
      EXPECT_EQ(costs->lock.has_value(), !type.lock_name.empty()) << m.name << " " << type.name;
    }
  }
}

TEST(VocabularyTest, EveryListedDeviceAndMachineRuns) {
  for (const SimDeviceDef& d : SimDevices()) {
    v1::CellSpec cell = test::Cell(std::string(d.name), v1::RANDREAD, 4096, 2, 1, 50'000'000);
    for (const MachineProfileDef& m : MachineProfiles()) {
      cell.mutable_target()->set_machine(std::string(m.name));
      const v1::RunResult r = test::RunCell(cell);
      EXPECT_GT(test::Ios(r), 0u) << d.name << " on " << m.name;
    }
  }
}

}  // namespace
}  // namespace blkbench::engine
