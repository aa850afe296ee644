// The perf-CI workflow end to end, as examples/ci/ ships it: examples/ci/gate-kernel-patch.sh
// run as a CI job would run it (a child process with $BLKBENCH_CONTROLLER) against a real
// controller and a sim agent. A patch known to improve (seed 000's batch dispatch) passes
// with exit 0; its revert is a regression with exit 1 and a failing JUnit case; a kernel
// no agent offers and a failing site hook are "could not run" (exit 3) with a clear message.
// CiExampleVmTest: the --vm mode for real, Debian's newest 6.1 and 6.12 kernels booted in
// qemu by the script's own transient agent (label vm).
#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/testing/command.h"
#include "common/testing/loop_device.h"
#include "common/vm/qemu.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/test_cluster.h"

namespace blkbench {
namespace {

using ::testing::AnyOf;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

constexpr char kBatch[] = "sim:6.16+dd-batch-dispatch+bfq-batch-dispatch";

std::string ScriptPath() {
  return std::string(BLKBENCH_SOURCE_DIR) + "/examples/ci/gate-kernel-patch.sh";
}

std::string BuildDir() {
  const char* build = getenv("BLKBENCH_BUILD_DIR");
  return build ? build : ".";
}

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
    setenv("BLKBENCH", (BuildDir() + "/cli/blkbench").c_str(), 1);
    std::filesystem::create_directories(tmp_);
    setenv("TMPDIR", tmp_.c_str(), 1);  // the script's mktemp -d
  }
  void TearDown() override {
    for (const char* v : {"BLKBENCH_CONTROLLER", "BLKBENCH_CI_HOOKS", "TMPDIR"}) unsetenv(v);
  }

  // The script removed its temporary directory.
  void ExpectNoTemporaryFiles() {
    EXPECT_TRUE(std::filesystem::is_empty(tmp_)) << "gate-kernel-patch.sh left files in " << tmp_;
  }

  testing::CommandResult Script(std::vector<std::string> args) {
    args.insert(args.begin(), ScriptPath());
    return testing::Run(args);
  }

  std::unique_ptr<testing::AgentProcess> agent_;
  const std::string tmp_ = dir_.File("tmp");
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
  ExpectNoTemporaryFiles();
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

// --vm mistakes are "could not run" before anything boots: an unknown kind or key, no agent
// program, a TLS directory that does not say which agent certificate to use.
TEST_F(CiExampleTest, VmModeArgumentErrorsAreCouldNotRunBeforeAnyBoot) {
  const std::vector<std::string> kernels = {"--baseline", "deb:6.1.0-*", "--candidate",
                                            "deb:6.12*"};
  auto with = [&](std::vector<std::string> args) {
    args.insert(args.end(), kernels.begin(), kernels.end());
    return Script(args);
  };
  testing::CommandResult kind = with({"--vm", "nvm"});
  EXPECT_EQ(kind.exit_code, 3);
  EXPECT_THAT(kind.output,
              HasSubstr("unknown kind 'nvm' (expected null_blk, nvme, hdd or virtio)"));
  testing::CommandResult key = with({"--vm", "hdd:queues=2"});
  EXPECT_EQ(key.exit_code, 3);
  EXPECT_THAT(key.output, HasSubstr("bad key 'queues=2' (hdd takes size, class"));

  setenv("BLKBENCH_AGENT", dir_.File("no-such-agent").c_str(), 1);
  testing::CommandResult agent = with({"--vm", "null_blk"});
  EXPECT_EQ(agent.exit_code, 3);
  EXPECT_THAT(agent.output, HasSubstr("no agent program"));

  setenv("BLKBENCH_AGENT", (BuildDir() + "/agent/blkbench-agent").c_str(), 1);
  const std::string tls = dir_.File("tls");
  std::filesystem::create_directories(tls);
  std::ofstream(tls + "/agent-ci1.pem") << "";
  std::ofstream(tls + "/agent-ci2.pem") << "";
  setenv("BLKBENCH_CI_AGENT_TLS_DIR", tls.c_str(), 1);
  testing::CommandResult certs = with({"--vm", "null_blk"});
  unsetenv("BLKBENCH_CI_AGENT_TLS_DIR");
  unsetenv("BLKBENCH_AGENT");
  EXPECT_EQ(certs.exit_code, 3);
  EXPECT_THAT(certs.output,
              HasSubstr("needs exactly one agent-ID.pem, or set $BLKBENCH_CI_AGENT_ID"));
  ExpectNoTemporaryFiles();
}

// The processes whose command line mentions `text` (the test's directory: the script's
// temporary directory, its agent's config and state, the guests' files are all in it).
std::vector<std::string> ProcessesMentioning(const std::string& text) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string pid = e.path().filename().string();
    if (pid.find_first_not_of("0123456789") != std::string::npos) continue;
    const int fd = open((e.path() / "cmdline").c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    char buf[8192];
    const ssize_t n = read(fd, buf, sizeof(buf));
    close(fd);
    if (n <= 0) continue;
    std::string cmdline(buf, static_cast<size_t>(n));
    std::replace(cmdline.begin(), cmdline.end(), '\0', ' ');
    if (absl::StrContains(cmdline, text)) out.push_back(absl::StrCat(pid, ": ", cmdline));
  }
  return out;
}

// The script's --vm mode as a CI job runs it against this test's controller: its own
// transient agent boots Debian's newest 6.1 and 6.12 kernels (the newest of each line,
// found with apt-cache; fetched into the kernel cache on first use), runs the shipped VM
// matrix on both, gates and publishes. TCG timings decide nothing, so any verdict (0, 1,
// 2) will do; "could not run" (3) will not. Afterwards no process of it is left and the
// controller has seen its agent go.
class CiExampleVmTest : public testing::ClusterTest {
 protected:
  CiExampleVmTest() : ClusterTest("ci_example_vm") {}

  void SetUp() override {
    if (absl::StatusOr<std::string> v = vm::QemuVersion("qemu-system-x86_64"); !v.ok()) {
      GTEST_SKIP() << "qemu is absent: " << v.status().message();
    }
    ASSERT_NO_FATAL_FAILURE(ClusterTest::SetUp());
    setenv("BLKBENCH_CONTROLLER", ControllerAddress().c_str(), 1);
    setenv("BLKBENCH", (BuildDir() + "/cli/blkbench").c_str(), 1);
    setenv("BLKBENCH_AGENT", (BuildDir() + "/agent/blkbench-agent").c_str(), 1);
    setenv("TMPDIR", dir_.path().c_str(), 1);  // the script's mktemp -d
    // The guests' accel is the default (auto): kvm where it works, else tcg, including a
    // /dev/kvm that cannot run the guest (common/vm/guest.h falls back at once).
  }
  // No process of the script's is left: its agent's and guests' command lines all name a
  // file in dir_. (Bounded: a qemu killed as its agent exits may take a moment to go.)
  void ExpectNothingLeft() {
    const absl::Time deadline = absl::Now() + absl::Seconds(10);
    while (!ProcessesMentioning(dir_.path()).empty() && absl::Now() < deadline) {
      absl::SleepFor(absl::Milliseconds(100));
    }
    EXPECT_THAT(ProcessesMentioning(dir_.path()), IsEmpty()) << "the agent or a qemu outlived it";
  }

  void TearDown() override {
    for (const char* v : {"BLKBENCH_CONTROLLER", "BLKBENCH", "BLKBENCH_AGENT", "TMPDIR"}) {
      unsetenv(v);
    }
  }
};

TEST_F(CiExampleVmTest, A61AndA612GuestAreGatedThroughATransientAgentThatLeavesNothing) {
  const std::string junit = dir_.File("vm.xml");
  const auto start = std::chrono::steady_clock::now();
  testing::CommandResult r = testing::Run(
      {ScriptPath(), "--vm", "null_blk", "--baseline", "deb:6.1.0-*", "--candidate", "deb:6.12*",
       "--runtime", "1s", "--timeout", "15m", "--metrics", "iops", "--junit", junit});
  std::cerr << "[ time ] gate-kernel-patch.sh --vm null_blk, 6.1 vs 6.12, 12 runs of 1 s: "
            << std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()
            << " s\n";
  EXPECT_THAT(r.exit_code, AnyOf(0, 1, 2)) << r.output;
  EXPECT_THAT(r.output, HasSubstr("base booted 6.1.0-"));
  EXPECT_THAT(r.output, HasSubstr("cand booted 6.12."));
  EXPECT_THAT(testing::ReadFileOr(junit), HasSubstr("<testsuite"));
  ExpectNothingLeft();

  // The kernel axis held the guests' releases; every run ran in the guest it names.
  auto listed = controller().ListExperiments(0);
  ASSERT_TRUE(listed.ok() && listed->size() == 1u);
  const v1::Experiment e = WaitForEnd((*listed)[0].id(), absl::Seconds(10));
  EXPECT_EQ(e.cells_size(), 4);
  EXPECT_GE(e.runs_size(), 12);
  for (const v1::Run& run : e.runs()) {
    EXPECT_EQ(run.state(), v1::RUN_DONE) << run.error();
    EXPECT_TRUE(absl::StartsWith(run.device_path(), "vm:")) << run.device_path();
  }
  auto agents = controller().ListAgents();
  ASSERT_TRUE(agents.ok()) << agents.status();
  ASSERT_EQ(agents->size(), 1u);
  EXPECT_TRUE(absl::StartsWith((*agents)[0].agent_id(), "ci-vm-")) << (*agents)[0].agent_id();
  EXPECT_FALSE((*agents)[0].connected()) << "the agent is still connected";
}

// Two specs of one kernel boot one release, which the kernel axis cannot tell apart: could
// not run, saying how to give the candidate its own release, and nothing left behind.
TEST_F(CiExampleVmTest, TwoKernelsOfOneReleaseAreCouldNotRunAndLeaveNothing) {
  testing::CommandResult r =
      testing::Run({ScriptPath(), "--vm", "null_blk", "--baseline", "deb:6.12*", "--candidate",
                    "deb:linux-image-6.12*", "--timeout", "15m"});
  EXPECT_EQ(r.exit_code, 3) << r.output;
  EXPECT_THAT(r.output, HasSubstr("both boot kernel 6.12."));
  EXPECT_THAT(r.output, HasSubstr("CONFIG_LOCALVERSION"));
  ExpectNothingLeft();
  EXPECT_THAT(controller().ListExperiments(0).value_or(std::vector<v1::Experiment>{}), IsEmpty());
}

}  // namespace
}  // namespace blkbench
