// Crash tests with the real daemons as separate processes (blkbench-controller and
// blkbench-agent from the build tree) on a Unix socket and a real loop device:
// SIGKILL the agent mid-run, SIGKILL the controller mid-experiment. Nothing acknowledged
// is lost, no run is stored twice, and the device's queue settings end as found.
#include <unistd.h>

#include <csignal>
#include <fstream>
#include <functional>

#include "blkbench/v1/controller.grpc.pb.h"
#include "common/states.h"
#include "common/testing/command.h"
#include "common/testing/loop_device.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "tests/daemon_cluster.h"

namespace blkbench {
namespace {

using testing::BuildDir;
using testing::ChildProcess;
using testing::DaemonCluster;
using testing::LoopDevice;

class DaemonsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    loop_ = LoopDevice::Create(64);
    if (!loop_) GTEST_SKIP() << "loop devices unavailable";
    if (!testing::DaemonsBuilt()) GTEST_SKIP() << "daemons not built in " << BuildDir();
    original_sched_ = loop_->SysfsQueue("scheduler");
    other_sched_ = loop_->OtherScheduler();
    if (other_sched_.empty()) GTEST_SKIP() << "the loop device offers one scheduler only";
  }

  std::unique_ptr<ChildProcess> StartController() {
    return cluster_.StartController(
        {"--heartbeat_ms=200", "--lease_ttl_ms=3000", "--sample_interval_ms=100"});
  }
  std::unique_ptr<ChildProcess> StartAgent() {
    return cluster_.StartAgent(
        "agent", "controller: unix:" + cluster_.socket() +
                     "\nagent_id: crash-agent\nstate_dir: " + cluster_.dir().File("agent-state") +
                     "\ndevices:\n  - {path: " + loop_->path() + ", class: loop}\n");
  }
  v1::Experiment WatchUntil(uint64_t id, const std::function<bool(const v1::Experiment&)>& pred) {
    return cluster_.WatchUntil(id, pred, 120);
  }
  uint64_t Submit(const std::string& matrix) { return cluster_.Submit(matrix); }
  v1::GetResultsResponse Results(uint64_t id) { return cluster_.Results(id); }
  static bool Ended(const v1::Experiment& e) { return DaemonCluster::Ended(e); }

  DaemonCluster cluster_{"daemons_test"};
  std::unique_ptr<LoopDevice> loop_;
  std::string original_sched_;
  std::string other_sched_;  // applied by the runs (bfq when the kernel has it)
};

// The runs switch the device to another scheduler, which the agent must put back.
std::string CrashMatrix(const std::string& scheduler) {
  return R"(name: crash
repeats: 2
job: {rw: randread, direct: 1, ioengine: io_uring, size: 16m, iodepth: 4, runtime: 1500ms,
      time_based: 1, scheduler: )" +
         scheduler + R"(}
target: {device_class: loop}
)";
}

TEST_F(DaemonsTest, AgentKilledMidRunIsRecoveredAndRunRequeued) {
  auto controller = StartController();
  auto agent = StartAgent();
  const uint64_t id = Submit(CrashMatrix(other_sched_));
  // Kill the agent while the first run is streaming samples with its scheduler applied.
  WatchUntil(id, [](const v1::Experiment& e) { return e.runs(0).samples() >= 2; });
  EXPECT_THAT(loop_->SysfsQueue("scheduler"), ::testing::HasSubstr("[" + other_sched_ + "]"));
  agent->Kill(SIGKILL);

  // The restarted agent restores the device from its journal, and the controller (told
  // by the new registration that the run is gone) re-queues it at once.
  agent = StartAgent();
  v1::Experiment e = WatchUntil(id, Ended);
  ASSERT_EQ(e.state(), v1::EXPERIMENT_DONE) << e.error();
  v1::GetResultsResponse res = Results(id);
  ASSERT_EQ(res.rows_size(), 2);
  EXPECT_EQ(res.rows(0).run().attempt(), 2u);
  EXPECT_EQ(res.rows(1).run().attempt(), 1u);
  for (const auto& row : res.rows()) {
    EXPECT_EQ(row.run().state(), v1::RUN_DONE);
    EXPECT_GT(row.run().result().iops(), 0);
    for (const auto& s : row.samples()) EXPECT_GT(s.seq(), 0u);
  }
  agent->Kill(SIGTERM);
  EXPECT_EQ(loop_->SysfsQueue("scheduler"), original_sched_);
}

TEST_F(DaemonsTest, ControllerKilledMidExperimentLosesNothingAcknowledged) {
  auto controller = StartController();
  auto agent = StartAgent();
  const uint64_t id = Submit(CrashMatrix(other_sched_));
  v1::Experiment before =
      WatchUntil(id, [](const v1::Experiment& e) { return e.runs(0).samples() >= 3; });
  const uint64_t acked = before.runs(0).samples();
  controller->Kill(SIGKILL);
  controller = StartController();  // same database; the agent reconnects and resumes

  v1::Experiment e = WatchUntil(id, Ended);
  ASSERT_EQ(e.state(), v1::EXPERIMENT_DONE) << e.error();
  v1::GetResultsResponse res = Results(id);
  ASSERT_EQ(res.rows_size(), 2);
  // The run in flight kept its lease through the restart: not executed twice.
  EXPECT_EQ(res.rows(0).run().attempt(), 1u);
  EXPECT_GE(static_cast<uint64_t>(res.rows(0).samples_size()), acked);
  uint64_t prev = 0;
  for (const auto& s : res.rows(0).samples()) {
    EXPECT_EQ(s.seq(), prev + 1) << "samples are stored once each, in order";
    prev = s.seq();
  }
  agent->Kill(SIGTERM);
  EXPECT_EQ(loop_->SysfsQueue("scheduler"), original_sched_);
}

// Both daemons print their own flags for --help and the git revision for --version.
TEST(DaemonFlagsTest, HelpListsTheDaemonsFlagsAndVersionTheRevision) {
  const std::string controller = BuildDir() + "/controller/blkbench-controller";
  const std::string agent = BuildDir() + "/agent/blkbench-agent";
  if (access(controller.c_str(), X_OK) != 0) GTEST_SKIP() << "daemons not built";
  for (const auto& [binary, flag] :
       {std::pair{controller, "--lease_ttl_ms"}, std::pair{agent, "--config"}}) {
    testing::CommandResult help = testing::Run({binary, "--help"});
    EXPECT_THAT(help.output, ::testing::HasSubstr(flag)) << binary;
    EXPECT_THAT(help.output, ::testing::Not(::testing::HasSubstr("No flags matched")));
    EXPECT_THAT(help.output, ::testing::Not(::testing::HasSubstr(BLKBENCH_SOURCE_DIR)));
    testing::CommandResult version = testing::Run({binary, "--version"});
    EXPECT_EQ(version.exit_code, 0);
    EXPECT_THAT(version.output, ::testing::MatchesRegex("blkbench-[a-z]+ [0-9.]+ \\(.+\\)\n"));
  }
}

}  // namespace
}  // namespace blkbench
