// Crash tests with the real daemons as separate processes (blkbench-controller and
// blkbench-agent from the build tree) on a Unix socket and a real loop device:
// SIGKILL the agent mid-run, SIGKILL the controller mid-experiment. Nothing acknowledged
// is lost, no run is stored twice, and the device's queue settings end as found.
#include <signal.h>
#include <unistd.h>

#include <fstream>
#include <functional>

#include "blkbench/v1/controller.grpc.pb.h"
#include "common/states.h"
#include "common/testing/command.h"
#include "common/testing/loop_device.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "tests/child_process.h"

namespace blkbench {
namespace {

using testing::ChildProcess;
using testing::LoopDevice;
using testing::TempDir;

std::string BuildDir() {
  const char* d = getenv("BLKBENCH_BUILD_DIR");
  return d ? d : ".";
}

class DaemonsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    loop_ = LoopDevice::Create(64);
    if (!loop_) GTEST_SKIP() << "loop devices unavailable";
    if (access((BuildDir() + "/controller/blkbench-controller").c_str(), X_OK) != 0) {
      GTEST_SKIP() << "daemons not built in " << BuildDir();
    }
    original_sched_ = loop_->SysfsQueue("scheduler");
    socket_ = dir_.File("controller.sock");
    std::ofstream(dir_.File("agent.yaml"))
        << "controller: unix:" << socket_
        << "\nagent_id: crash-agent\nstate_dir: " << dir_.File("agent-state")
        << "\ndevices:\n  - {path: " << loop_->path() << ", class: loop}\n";
  }

  std::unique_ptr<ChildProcess> StartController() {
    auto p = std::make_unique<ChildProcess>(
        std::vector<std::string>{BuildDir() + "/controller/blkbench-controller",
                                 "--listen=", "--metrics_listen=127.0.0.1:0", "--socket=" + socket_,
                                 "--db=" + dir_.File("db.sqlite"), "--heartbeat_ms=200",
                                 "--lease_ttl_ms=3000", "--sample_interval_ms=100"},
        dir_.File("controller.log"), ChildProcess::Log::kStderr);
    channel_ = grpc::CreateChannel("unix:" + socket_, grpc::InsecureChannelCredentials());
    stub_ = v1::ControllerService::NewStub(channel_);
    EXPECT_TRUE(
        channel_->WaitForConnected(std::chrono::system_clock::now() + std::chrono::seconds(20)));
    return p;
  }
  std::unique_ptr<ChildProcess> StartAgent() {
    return std::make_unique<ChildProcess>(
        std::vector<std::string>{BuildDir() + "/agent/blkbench-agent",
                                 "--config=" + dir_.File("agent.yaml")},
        dir_.File("agent.log"), ChildProcess::Log::kStderr);
  }

  // Follows the experiment's watch stream until `pred` holds (or the stream ends).
  v1::Experiment WatchUntil(uint64_t id, const std::function<bool(const v1::Experiment&)>& pred) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(120));
    v1::WatchExperimentRequest req;
    req.set_id(id);
    auto reader = stub_->WatchExperiment(&ctx, req);
    v1::WatchEvent ev;
    v1::Experiment last;
    while (reader->Read(&ev)) {
      last = ev.experiment();
      if (pred(last)) {
        ctx.TryCancel();
        break;
      }
    }
    reader->Finish();
    return last;
  }
  uint64_t Submit(const std::string& matrix) {
    grpc::ClientContext ctx;
    v1::SubmitExperimentRequest req;
    req.set_file_name("crash.yaml");
    req.set_matrix_text(matrix);
    v1::Experiment e;
    grpc::Status s = stub_->SubmitExperiment(&ctx, req, &e);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return e.id();
  }
  v1::GetResultsResponse Results(uint64_t id) {
    grpc::ClientContext ctx;
    v1::GetResultsRequest req;
    req.set_experiment_id(id);
    req.set_with_samples(true);
    v1::GetResultsResponse resp;
    EXPECT_TRUE(stub_->GetResults(&ctx, req, &resp).ok());
    return resp;
  }

  static bool Ended(const v1::Experiment& e) { return IsEndedExperimentState(e.state()); }

  TempDir dir_{"daemons_test"};
  std::unique_ptr<LoopDevice> loop_;
  std::string original_sched_;
  std::string socket_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::ControllerService::Stub> stub_;
};

constexpr char kMatrix[] = R"(name: crash
repeats: 2
job: {rw: randread, direct: 1, ioengine: io_uring, size: 16m, iodepth: 4, runtime: 1500ms,
      time_based: 1, scheduler: bfq}
target: {device_class: loop}
)";

TEST_F(DaemonsTest, AgentKilledMidRunIsRecoveredAndRunRequeued) {
  auto controller = StartController();
  auto agent = StartAgent();
  const uint64_t id = Submit(kMatrix);
  // Kill the agent while the first run is streaming samples with bfq applied.
  WatchUntil(id, [](const v1::Experiment& e) { return e.runs(0).samples() >= 2; });
  EXPECT_THAT(loop_->SysfsQueue("scheduler"), ::testing::HasSubstr("[bfq]"));
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
  const uint64_t id = Submit(kMatrix);
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
