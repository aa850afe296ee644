// The elevator registry seen from the blk-mq model: a scheduler registered by this test
// alone (a FIFO "noop-test") runs a cell without any change to the core, and the
// registry's own rules (names are unique, the built-in set is mq-deadline, bfq, kyber).
#include "engine/model/elevator_registry.h"

#include <deque>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "engine/model/config.h"
#include "engine/model/engine.h"
#include "engine/model/engine_test_util.h"
#include "engine/sim/machine_profile.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace blkbench::engine {
namespace {

using ::testing::HasSubstr;

// The toy: one FIFO for every hardware queue, no merging, no depth limit, no lock.
class NoopTest final : public Elevator {
 public:
  absl::Status Init(const ElevatorQueueLimits& /*limits*/) override { return absl::OkStatus(); }
  void PrepareRequest(SchedRequest& rq) override { counted_.Reset(rq); }
  void InsertRequests(std::span<SchedRequest* const> rqs, InsertFlags /*flags*/,
                      uint64_t /*now_ns*/, std::vector<SchedRequest*>& /*freed*/) override {
    for (SchedRequest* rq : rqs) {
      bool& counted = counted_[*rq].counted;
      (counted ? counters_.reinserted : counters_.inserted) += 1;
      counted = true;
      fifo_.push_back(rq);
    }
  }
  SchedRequest* DispatchRequest(uint64_t /*now_ns*/) override {
    if (fifo_.empty()) return nullptr;
    SchedRequest* rq = fifo_.front();
    fifo_.pop_front();
    ++counters_.dispatched;
    return rq;
  }
  bool HasWork() const override { return !fifo_.empty(); }
  void FinishRequest(SchedRequest& rq) override {
    bool& counted = counted_[rq].counted;
    if (counted) ++counters_.completed;
    counted = false;
  }
  const ElevatorCounters& counters() const override { return counters_; }

 private:
  struct NoopRq {
    bool counted = false;
  };
  RequestData<NoopRq> counted_;
  std::deque<SchedRequest*> fifo_;
  ElevatorCounters counters_;
};

std::unique_ptr<Elevator> CreateNoopTest(const ElevatorSetup& /*setup*/) {
  return std::make_unique<NoopTest>();
}

ElevatorType NoopTestType() { return {.name = "noop-test", .create = &CreateNoopTest}; }

// desktop-16's profile with `costs` added under schedulers:, as a matrix carries a
// profile file of its own (target.machine_profile).
std::string Desktop16With(std::string_view costs) {
  std::ifstream in(MachineProfilesDir() + "/desktop-16.yaml");
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_TRUE(absl::StrContains(text.str(), "\nschedulers:\n"));
  const std::string with = "\nschedulers:\n" + std::string(costs);
  return absl::StrReplaceAll(text.str(), {{"\nschedulers:\n", with}});
}

EngineConfig NoopCell() {
  absl::StatusOr<EngineConfig> c =
      DeriveConfig(test::Cell("null_blk", v1::RANDREAD, 4096, 8, 4, 5'000'000));
  EXPECT_TRUE(c.ok()) << c.status();
  c->queue.scheduler = "noop-test";  // the matrix vocabulary does not know it
  c->machine_profile = Desktop16With("  noop-test:\n    dispatch_ns: 90\n");
  return *c;
}

TEST(ElevatorRegistryTest, BuiltinTypes) {
  const ElevatorRegistry& r = ElevatorRegistry::Builtin();
  ASSERT_EQ(r.types().size(), 3u);
  EXPECT_EQ(r.types()[0].name, "mq-deadline");
  EXPECT_EQ(r.Find("bfq")->lock_name, "bfqd->lock");
  EXPECT_EQ(r.Find("kyber")->lock_name, "");
  EXPECT_EQ(r.Find("noop-test"), nullptr);
}

TEST(ElevatorRegistryTest, RegisterChecksTheType) {
  ElevatorRegistry r = ElevatorRegistry::Builtin();
  EXPECT_TRUE(r.Register(NoopTestType()).ok());
  EXPECT_EQ(r.Register(NoopTestType()).code(), absl::StatusCode::kAlreadyExists);
  ElevatorType nameless = NoopTestType();
  nameless.name.clear();
  EXPECT_EQ(r.Register(nameless).code(), absl::StatusCode::kInvalidArgument);
  ElevatorType insert_only = NoopTestType();
  insert_only.name = "insert-only";
  insert_only.insert_lock_name = "insert->lock";
  EXPECT_EQ(r.Register(insert_only).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(r.types().size(), 4u);
}

TEST(ElevatorRegistryTest, UnregisteredSchedulerIsRejected) {
  absl::StatusOr<std::unique_ptr<Engine>> e = Engine::Create(NoopCell(), 0);
  EXPECT_EQ(e.status().code(), absl::StatusCode::kInvalidArgument);
}

// A scheduler's costs are the machine profile's, under its name: a profile without them
// is refused, naming the profile, the scheduler and what to add.
TEST(ElevatorRegistryTest, ProfileWithoutTheSchedulersCostsIsRefused) {
  ElevatorRegistry r = ElevatorRegistry::Builtin();
  ASSERT_TRUE(r.Register(NoopTestType()).ok());
  EngineConfig config = NoopCell();
  config.machine_profile.clear();  // the shipped desktop-16 knows nothing of noop-test
  absl::StatusOr<std::unique_ptr<Engine>> e = Engine::Create(config, 0, r);
  ASSERT_EQ(e.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(e.status().message(), HasSubstr("machine profile \"desktop-16\""));
  EXPECT_THAT(e.status().message(), HasSubstr("no costs for scheduler \"noop-test\""));
  EXPECT_THAT(e.status().message(), HasSubstr("schedulers: {noop-test: {dispatch_ns: N}}"));
  // A scheduler with a global lock needs its lock's costs too.
  ElevatorType locked = NoopTestType();
  locked.name = "noop-locked";
  locked.lock_name = "noop->lock";
  ASSERT_TRUE(r.Register(locked).ok());
  config.queue.scheduler = "noop-locked";
  config.machine_profile = Desktop16With("  noop-locked:\n    dispatch_ns: 90\n");
  e = Engine::Create(config, 0, r);
  ASSERT_EQ(e.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(e.status().message(), HasSubstr("no lock_missed_lines for scheduler"));
}

// A fourth elevator, registered here only, runs a cell: requests go through its FIFO,
// scheduler tags are allocated, and the run is deterministic.
TEST(ElevatorRegistryTest, ToyElevatorRunsACell) {
  ElevatorRegistry r = ElevatorRegistry::Builtin();
  ASSERT_TRUE(r.Register(NoopTestType()).ok());
  uint64_t hash = 0;
  for (int run = 0; run < 2; ++run) {
    const EngineConfig config = NoopCell();
    absl::StatusOr<std::unique_ptr<Engine>> created = Engine::Create(config, 0, r);
    ASSERT_TRUE(created.ok()) << created.status();
    Engine& e = **created;
    e.RunUntil(e.time_limit());
    EXPECT_FALSE(e.stalled()) << e.DebugState();
    ASSERT_NE(e.elevator(), nullptr);
    EXPECT_EQ(e.elevator_lock(), nullptr);
    EXPECT_GT(e.sched_tags(), 0u);
    const ElevatorCounters& c = e.elevator()->counters();
    EXPECT_GT(c.dispatched, 1000u);
    EXPECT_LE(c.dispatched, c.inserted + c.reinserted);
    EXPECT_GT(e.counters().read_ios, 1000u);
    EXPECT_EQ(e.counters().elv_dispatch_skipped, 0u);
    if (run == 0) hash = e.trace_hash();
    EXPECT_EQ(e.trace_hash(), hash);
  }
}

}  // namespace
}  // namespace blkbench::engine
