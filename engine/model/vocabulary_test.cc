// The engine models exactly the schedulers, devices and machine profiles that
// common/sim_vocabulary.h lists (and so the matrix parser accepts).
#include <string>

#include "common/sim_vocabulary.h"
#include "engine/model/config.h"
#include "engine/model/engine.h"
#include "engine/model/engine_test_util.h"
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
