// A transient store failure with real parts: a controller (gRPC on loopback, SQLite file)
// whose store refuses samples and results as a full disk does, and an agent running a sim
// run through it. While the store fails nothing is acknowledged; once it works again the
// agent resends on its own timer — no reconnect — and the run ends DONE with every sample
// stored once and in order. (Before: cumulative acks dropped unstored samples, and
// resends waited for a reconnect that never came, so the run hung.)
#include "absl/synchronization/notification.h"
#include "controller/store/store_wrapper.h"
#include "gtest/gtest.h"
#include "tests/test_cluster.h"

namespace blkbench {
namespace {

// 2 s of simulated time at one sample per 100 ms: 20 samples, then the result.
constexpr char kMatrix[] = R"(name: store-fault
job: {rw: randread, bs: 4k, iodepth: 4, ioengine: io_uring, runtime: 2s, time_based: 1,
      randseed: 5}
target: {device_class: sim:null_blk}
)";

class StoreFaultTest : public testing::ClusterTest {
 protected:
  StoreFaultTest() : ClusterTest("store_fault") {}
  void SetUp() override {
    ServerOptions opts = ServerDefaults();
    opts.controller.store_retry_ms = 100;
    opts.wrap_store = [this](std::unique_ptr<Store> inner) {
      auto f = std::make_unique<FaultyStore>(std::move(inner));
      faulty_ = f.get();
      return f;
    };
    ASSERT_NO_FATAL_FAILURE(StartController(opts));
  }
  FaultyStore* faulty_ = nullptr;
};

TEST_F(StoreFaultTest, SamplesRefusedByAFullStoreAreResentAndStoredWithoutAReconnect) {
  ASSERT_NE(faulty_, nullptr);
  // Refusing from the start every sample and the result (registration and placement
  // still work; ChaosTest.DatabaseDiskFillsAndIsFreedMidRun fills a real disk).
  faulty_->SetFailing(true, FaultyStore::Scope::kAgentReports);
  AgentConfig config;
  config.agent_id = "fault-agent";
  config.sim_devices = {"sim:null_blk"};
  config.state_dir = dir_.File("agent-state");
  config.controller = ControllerAddress();
  testing::AgentProcess agent(config);
  ASSERT_TRUE(agent.ok());
  ASSERT_TRUE(agent.agent().WaitConnected(true, absl::Seconds(20)));
  auto exp = controller().Submit("store-fault.yaml", kMatrix);
  ASSERT_TRUE(exp.ok()) << exp.status();
  // Wait (on the controller's change signal) until the store refused all 20 samples and
  // the result at least once: the run is over on the agent, nothing of it is stored.
  uint64_t seen = 0;
  const absl::Time give_up = absl::Now() + absl::Minutes(2);
  while (faulty_->failures() < 21 && absl::Now() < give_up) {
    seen = controller().WaitForChange(seen, absl::Milliseconds(200));
  }
  ASSERT_GE(faulty_->failures(), 21);
  const uint64_t run_id = controller().GetExperiment(exp->id(), true)->runs(0).id();
  EXPECT_TRUE(faulty_->ListSamples(run_id)->empty());
  const uint64_t sessions = agent.agent().Sessions();
  faulty_->SetFailing(false);  // space again
  v1::Experiment done = WaitForEndWithProgress(exp->id(), absl::Minutes(2));
  ASSERT_EQ(done.state(), v1::EXPERIMENT_DONE) << done.error();
  EXPECT_EQ(agent.agent().Sessions(), sessions) << "recovered by reconnecting";
  auto samples = faulty_->ListSamples(run_id);
  ASSERT_TRUE(samples.ok());
  ASSERT_EQ(samples->size(), 20u);
  for (size_t i = 0; i < samples->size(); ++i) EXPECT_EQ((*samples)[i].seq(), i + 1);
  EXPECT_EQ(done.runs(0).attempt(), 1u);
  EXPECT_TRUE(done.runs(0).has_result());
}

}  // namespace
}  // namespace blkbench
