// The perf-CI workflow end to end, as examples/ci/ ships it: examples/ci/gate-kernel-patch.sh
// run as a CI job would run it (a child process with $BLKBENCH_CONTROLLER) against a real
// controller and a sim agent. A patch known to improve (seed 000's batch dispatch) passes
// with exit 0; its revert is a regression with exit 1 and a failing JUnit case; a kernel
// no agent offers and a failing site hook are "could not run" (exit 3) with a clear message.
#include <cstdlib>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "common/testing/command.h"
#include "common/testing/loop_device.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/test_cluster.h"

namespace blkbench {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kBatch[] = "sim:6.16+dd-batch-dispatch+bfq-batch-dispatch";

class CiExampleTest : public testing::ClusterTest {
 protected:
  CiExampleTest() : ClusterTest("ci_example") {}

  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(ClusterTest::SetUp());
    AgentConfig config;
    config.agent_id = "ci-agent";
    config.sim_devices = {"sim:null_blk"};
    config.state_dir = dir_.File("agent-state");
    config.controller = ControllerAddress();
    agent_ = std::make_unique<testing::AgentProcess>(config);
    ASSERT_TRUE(agent_->ok());
    ASSERT_TRUE(agent_->agent().WaitConnected(true, absl::Seconds(20)));
    setenv("BLKBENCH_CONTROLLER", ControllerAddress().c_str(), 1);
    const char* build = getenv("BLKBENCH_BUILD_DIR");
    setenv("BLKBENCH", absl::StrCat(build ? build : ".", "/cli/blkbench").c_str(), 1);
  }
  void TearDown() override {
    unsetenv("BLKBENCH_CONTROLLER");
    unsetenv("BLKBENCH_CI_HOOKS");
  }

  testing::CommandResult Script(std::vector<std::string> args) {
    args.insert(args.begin(),
                std::string(BLKBENCH_SOURCE_DIR) + "/examples/ci/gate-kernel-patch.sh");
    return testing::Run(args);
  }

  std::unique_ptr<testing::AgentProcess> agent_;
};

TEST_F(CiExampleTest, AnImprovingPatchPassesAndItsRevertFailsTheGate) {
  const std::string junit = dir_.File("improve.xml");
  testing::CommandResult improve = Script(
      {"--baseline", "sim:6.16", "--candidate", kBatch, "--metrics", "iops", "--junit", junit});
  EXPECT_EQ(improve.exit_code, 0) << improve.output;
  EXPECT_THAT(improve.output, HasSubstr("improvement"));
  const std::string pass = testing::ReadFileOr(junit);
  EXPECT_THAT(pass, HasSubstr("<testsuite"));
  EXPECT_THAT(pass, Not(HasSubstr("<failure")));

  const std::string junit2 = dir_.File("regress.xml");
  testing::CommandResult regress = Script(
      {"--baseline", kBatch, "--candidate", "sim:6.16", "--metrics", "iops", "--junit", junit2});
  EXPECT_EQ(regress.exit_code, 1) << regress.output;
  EXPECT_THAT(regress.output, HasSubstr("regression of iops"));
  EXPECT_THAT(testing::ReadFileOr(junit2), HasSubstr("<failure type=\"regression\""));
}

TEST_F(CiExampleTest, AKernelNoAgentOffersIsSaidAtOnceAndTimesOutAsCouldNotRun) {
  // The agent offers only sim:null_blk: the gate says so when it submits, then gives up
  // at --timeout.
  const std::string matrix = dir_.File("optane.yaml");
  std::string text =
      testing::ReadFileOr(std::string(BLKBENCH_SOURCE_DIR) + "/examples/ci/kernel-gate.yaml");
  text.replace(text.find("device_class: \"sim:null_blk\""), 28, "device_class: sim:optane");
  text.replace(text.find("device:\n"), std::string::npos, "");
  std::ofstream(matrix) << text;
  testing::CommandResult r = Script(
      {"--matrix", matrix, "--baseline", "sim:6.16", "--candidate", kBatch, "--timeout", "2s"});
  EXPECT_EQ(r.exit_code, 3) << r.output;
  EXPECT_THAT(r.output, HasSubstr("no connected agent offers device class 'sim:optane'"));
  EXPECT_THAT(r.output, HasSubstr("did not end within 2s"));
}

TEST_F(CiExampleTest, RealKernelsNeedHooksAndAFailingHookIsCouldNotRun) {
  testing::CommandResult none = Script({"--baseline", "v6.12", "--candidate", "HEAD"});
  EXPECT_EQ(none.exit_code, 3);
  EXPECT_THAT(none.output, HasSubstr("BLKBENCH_CI_HOOKS"));
  setenv("BLKBENCH_CI_HOOKS",
         (std::string(BLKBENCH_SOURCE_DIR) + "/examples/ci/hooks.example.sh").c_str(), 1);
  testing::CommandResult unfilled = Script({"--baseline", "v6.12", "--candidate", "HEAD"});
  EXPECT_EQ(unfilled.exit_code, 3);
  EXPECT_THAT(unfilled.output, HasSubstr("build_kernel v6.12 failed"));
}

}  // namespace
}  // namespace blkbench
