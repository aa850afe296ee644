// Tests for RunExecutor: allowlist refusals, a run on a regular file, queue settings
// applied during a run on a real loop device and restored after it, and each repeat's seed.
#include "agent/run_executor.h"

#include <sys/stat.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <functional>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "agent/cell/sim_device.h"
#include "agent/device/sysfs.h"
#include "agent/runners.h"
#include "common/testing/loop_device.h"
#include "engine/model/engine_runner.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace blkbench {
namespace {

using ::testing::HasSubstr;
using testing::LoopDevice;
using testing::TempDir;

v1::RunAssignment Assignment(const std::string& path, v1::RwMode rw = v1::RANDREAD) {
  v1::RunAssignment a;
  a.set_run_id(7);
  a.set_attempt(1);
  a.set_lease_id("L1");
  a.set_device_path(path);
  a.set_sample_interval_ms(50);
  v1::JobSpec* job = a.mutable_cell()->mutable_job();
  job->set_rw(rw);
  job->set_bs(4096);
  job->set_size(4 << 20);
  job->set_iodepth(4);
  job->set_numjobs(1);
  job->set_iodepth_batch_submit(1);
  job->set_iodepth_batch_complete_min(1);
  job->set_iodepth_batch_complete_max(4);
  job->set_ioengine(v1::IO_URING);
  job->set_thread(true);
  job->set_io_size(1 << 20);
  return a;
}

class RunExecutorTest : public ::testing::Test {
 protected:
  void Init(std::vector<AllowedDevice> devices) {
    config_.state_dir = state_.path();
    config_.devices = std::move(devices);
    journal_ = std::move(*QueueSettingsJournal::Open(state_.path()));
    executor_ = std::make_unique<RunExecutor>(config_, *journal_, DefaultRunnerFactory());
    // As the agent's registration does: records each allowlisted device's identity.
    offer_ = executor_->OfferDevices();
  }
  v1::RunFinished Run(const v1::RunAssignment& a) {
    samples_ = 0;
    return executor_->Execute(a, cancel_, [this](const v1::Sample&) { ++samples_; });
  }

  TempDir dir_{"run_executor_test"};
  TempDir state_{"run_executor_state"};
  AgentConfig config_;
  std::unique_ptr<QueueSettingsJournal> journal_;
  std::unique_ptr<RunExecutor> executor_;
  DeviceOffer offer_;
  std::atomic<bool> cancel_{false};
  int samples_ = 0;
};

TEST_F(RunExecutorTest, PathNotOnAllowlistIsRefused) {
  const std::string file = dir_.File("data");
  std::ofstream(file) << std::string(1 << 20, 'x');
  Init({{dir_.File("other"), "file"}});
  v1::RunFinished f = Run(Assignment(file, v1::RANDWRITE));
  EXPECT_EQ(f.outcome(), v1::RUN_OUTCOME_FAILED);
  EXPECT_THAT(f.error(), HasSubstr("not on this agent's allowlist"));
  EXPECT_EQ(testing::ReadFileOr(file), std::string(1 << 20, 'x'));
}

TEST_F(RunExecutorTest, RunsOnAnAllowlistedRegularFile) {
  const std::string file = dir_.File("data");
  std::ofstream(file) << std::string(8 << 20, '\0');
  Init({{file, "file"}});
  v1::RunFinished f = Run(Assignment(file));
  ASSERT_EQ(f.outcome(), v1::RUN_OUTCOME_SUCCEEDED) << f.error();
  EXPECT_EQ(f.run_id(), 7u);
  EXPECT_EQ(f.lease_id(), "L1");
  EXPECT_EQ(f.result().io().read_bytes(), 1u << 20);
  EXPECT_EQ(f.result().device().path(), file);
  EXPECT_FALSE(f.result().device().is_block());
  EXPECT_FALSE(f.result().host().kernel_release().empty());
}

TEST_F(RunExecutorTest, SimulatedDeviceRunsOnTheEngineAndTouchesNoHardware) {
  Init({});
  v1::RunAssignment a = Assignment("sim:null_blk");
  a.mutable_cell()->mutable_target()->set_device_class("sim:null_blk");
  a.mutable_cell()->mutable_job()->set_runtime_ns(20'000'000);
  a.mutable_cell()->mutable_job()->set_time_based(true);
  v1::RunFinished f = Run(a);
  ASSERT_EQ(f.outcome(), v1::RUN_OUTCOME_SUCCEEDED) << f.error();
  EXPECT_EQ(f.result().runner(), "engine");
  EXPECT_TRUE(f.result().device().simulated());
  EXPECT_EQ(f.result().device().device_class(), "sim:null_blk");
  EXPECT_GT(f.result().iops(), 0);
  EXPECT_GT(samples_, 0);
}

TEST_F(RunExecutorTest, SimulatedClassNotOfferedIsRefused) {
  Init({});
  v1::RunFinished f = Run(Assignment("sim:tape"));
  EXPECT_EQ(f.outcome(), v1::RUN_OUTCOME_FAILED);
  EXPECT_THAT(f.error(), HasSubstr("not on this agent's allowlist"));
}

TEST_F(RunExecutorTest, QueueSettingsAppliedDuringRunAndRestoredAfter) {
  auto loop = LoopDevice::Create(16);
  if (!loop) GTEST_SKIP() << "loop devices unavailable";
  const std::string sched = loop->SysfsQueue("scheduler");
  const std::string nr = loop->SysfsQueue("nr_requests");
  const std::string other = loop->OtherScheduler();  // bfq when the kernel has it
  if (other.empty()) GTEST_SKIP() << "the loop device offers one scheduler only";
  Init({{loop->path(), "loop"}});
  v1::RunAssignment a = Assignment(loop->path());
  a.mutable_cell()->mutable_queue()->set_scheduler(other);
  a.mutable_cell()->mutable_queue()->set_nr_requests(32);
  a.mutable_cell()->mutable_job()->set_direct(true);
  v1::RunFinished f = Run(a);
  ASSERT_EQ(f.outcome(), v1::RUN_OUTCOME_SUCCEEDED) << f.error();
  EXPECT_EQ(f.result().applied().scheduler(), other);
  EXPECT_EQ(f.result().applied().nr_requests(), 32u);
  EXPECT_EQ(f.result().device().kernel_name(), loop->name());
  EXPECT_EQ(loop->SysfsQueue("scheduler"), sched);
  EXPECT_EQ(loop->SysfsQueue("nr_requests"), nr);
}

// The scheduler's tunables: in force during the run (applied.iosched) and the device as an
// admin left it afterwards (mq-deadline with fifo_batch 7), whether the run succeeded,
// failed after the device was prepared (a CPU the host lacks) or was cancelled.
TEST_F(RunExecutorTest, TunablesAppliedDuringRunAndRestoredAfterSuccessFailureAndCancel) {
  auto loop = LoopDevice::Create(16);
  if (!loop) GTEST_SKIP() << "loop devices unavailable";
  if (loop->SysfsQueue("scheduler").find("mq-deadline") == std::string::npos) {
    GTEST_SKIP() << "no mq-deadline";
  }
  const std::string queue = "/sys/block/" + loop->name() + "/queue/";
  ASSERT_TRUE(WriteAttribute(queue + "scheduler", "mq-deadline").ok());
  ASSERT_TRUE(WriteAttribute(queue + "iosched/fifo_batch", "7").ok());
  auto tunable = [&](const std::string& name) {
    return std::string(absl::StripAsciiWhitespace(loop->SysfsQueue("iosched/" + name)));
  };
  const std::string read_expire = tunable("read_expire");
  Init({{loop->path(), "loop"}});
  auto assignment = [&] {
    v1::RunAssignment a = Assignment(loop->path());
    a.mutable_cell()->mutable_queue()->set_scheduler("mq-deadline");
    (*a.mutable_cell()->mutable_queue()->mutable_iosched())["fifo_batch"] = "1";
    (*a.mutable_cell()->mutable_queue()->mutable_iosched())["read_expire"] = "200";
    a.mutable_cell()->mutable_job()->set_direct(true);
    return a;
  };
  auto expect_as_found = [&] {
    EXPECT_THAT(loop->SysfsQueue("scheduler"), HasSubstr("[mq-deadline]"));
    EXPECT_EQ(tunable("fifo_batch"), "7");
    EXPECT_EQ(tunable("read_expire"), read_expire);
  };

  v1::RunFinished ok = Run(assignment());
  ASSERT_EQ(ok.outcome(), v1::RUN_OUTCOME_SUCCEEDED) << ok.error();
  EXPECT_EQ(ok.result().applied().iosched().at("fifo_batch"), "1");
  EXPECT_EQ(ok.result().applied().iosched().at("read_expire"), "200");
  EXPECT_EQ(ok.result().applied().iosched().at("writes_starved"), "2");     // in force, not set
  EXPECT_EQ(ok.result().device().queue().iosched().at("fifo_batch"), "7");  // as found
  expect_as_found();

  v1::RunAssignment failing = assignment();
  failing.mutable_cell()->mutable_job()->set_cpus_allowed("4000");
  v1::RunFinished failed = Run(failing);
  EXPECT_EQ(failed.outcome(), v1::RUN_OUTCOME_FAILED);
  EXPECT_THAT(failed.error(), HasSubstr("cpus_allowed"));
  expect_as_found();

  v1::RunAssignment long_run = assignment();
  long_run.mutable_cell()->mutable_job()->set_time_based(true);
  long_run.mutable_cell()->mutable_job()->set_runtime_ns(60'000'000'000);
  std::string during;
  v1::RunFinished cancelled = executor_->Execute(long_run, cancel_, [&](const v1::Sample&) {
    if (during.empty()) during = tunable("fifo_batch");
    cancel_ = true;
  });
  EXPECT_EQ(cancelled.outcome(), v1::RUN_OUTCOME_CANCELED) << cancelled.error();
  EXPECT_EQ(during, "1");
  expect_as_found();
}

// The device's own counters over the run: a read-only job's 1 MiB reached the device
// and nothing was written (reads by others, e.g. udev's probe, may add to the reads).
TEST_F(RunExecutorTest, TheResultCarriesTheDevicesOwnCounters) {
  auto loop = LoopDevice::Create(16);
  if (!loop) GTEST_SKIP() << "loop devices unavailable";
  Init({{loop->path(), "loop"}});
  v1::RunAssignment a = Assignment(loop->path());
  a.mutable_cell()->mutable_job()->set_direct(true);
  a.mutable_cell()->mutable_job()->set_rw(v1::RANDREAD);
  v1::RunFinished f = Run(a);
  ASSERT_EQ(f.outcome(), v1::RUN_OUTCOME_SUCCEEDED) << f.error();
  const v1::DeviceStats& s = f.result().device_stats();
  EXPECT_GE(s.read_bytes(), 1u << 20);
  EXPECT_GE(s.reads(), (1u << 20) / a.cell().job().bs());
  EXPECT_EQ(s.write_bytes(), 0u);
  EXPECT_GT(s.elapsed_s(), 0);
  EXPECT_LE(s.util_pct(), 100);
}

TEST_F(RunExecutorTest, UnknownSchedulerFailsAndChangesNothing) {
  auto loop = LoopDevice::Create(16);
  if (!loop) GTEST_SKIP() << "loop devices unavailable";
  const std::string sched = loop->SysfsQueue("scheduler");
  Init({{loop->path(), "loop"}});
  v1::RunAssignment a = Assignment(loop->path(), v1::RANDWRITE);
  a.mutable_cell()->mutable_queue()->set_scheduler("cfq");
  const uint64_t writes = loop->WritesCompleted();
  v1::RunFinished f = Run(a);
  EXPECT_EQ(f.outcome(), v1::RUN_OUTCOME_FAILED);
  EXPECT_THAT(f.error(), HasSubstr("cfq"));
  EXPECT_EQ(loop->SysfsQueue("scheduler"), sched);
  EXPECT_EQ(loop->WritesCompleted(), writes);
}

// A controller (buggy, compromised or fake) cannot make the agent run what the matrix
// parser refuses: each out-of-bounds cell fails before the device is opened.
TEST_F(RunExecutorTest, OutOfBoundsAssignmentsAreRefusedBeforeAnyWrite) {
  auto loop = LoopDevice::Create(16);
  if (!loop) GTEST_SKIP() << "loop devices unavailable";
  Init({{loop->path(), "loop"}});
  const uint64_t writes = loop->WritesCompleted();
  std::vector<std::pair<std::function<void(v1::CellSpec&)>, std::string>> bad = {
      {[](v1::CellSpec& c) { c.mutable_job()->set_numjobs(20000); }, "numjobs 20000"},
      {[](v1::CellSpec& c) { c.mutable_job()->set_iodepth(4'000'000'000u); }, "iodepth"},
      {[](v1::CellSpec& c) { c.mutable_job()->set_bs(1000); }, "bs 1000"},
      {[](v1::CellSpec& c) { c.mutable_job()->set_rwmixread(101); }, "rwmixread"},
  };
  for (const auto& [mutate, what] : bad) {
    v1::RunAssignment a = Assignment(loop->path(), v1::RANDWRITE);
    mutate(*a.mutable_cell());
    v1::RunFinished f = Run(a);
    EXPECT_EQ(f.outcome(), v1::RUN_OUTCOME_FAILED) << what;
    EXPECT_THAT(f.error(), HasSubstr("refused the assignment")) << what;
    EXPECT_THAT(f.error(), HasSubstr(what));
  }
  EXPECT_EQ(loop->WritesCompleted(), writes);
}

// The wrong-disk identity re-check: /dev/loopN recorded at registration over file A, then
// re-pointed at a smaller file B. The run is refused under the hold, before any sysfs write,
// and B sees no write.
TEST_F(RunExecutorTest, ALoopDeviceReattachedToAnotherFileIsRefusedWithoutAWrite) {
  absl::StatusOr<std::unique_ptr<LoopDevice>> loop = LoopDevice::Attach(64 << 20);
  if (!loop.ok()) GTEST_SKIP() << loop.status();
  Init({{(*loop)->path(), "loop"}});
  ASSERT_EQ(offer_.offered.size(), 1u);
  EXPECT_EQ(offer_.offered[0].backing_file(), (*loop)->backing_path());
  const std::string file_a = (*loop)->backing_path();
  struct stat a;
  ASSERT_EQ(stat(file_a.c_str(), &a), 0);

  if (absl::Status re = (*loop)->ReattachNewBackingFile(32 << 20); !re.ok()) {
    GTEST_SKIP() << "could not re-attach the same loop device: " << re;
  }
  const std::string file_b = (*loop)->backing_path();
  struct stat b;
  ASSERT_EQ(stat(file_b.c_str(), &b), 0);
  const std::string scheduler = (*loop)->SysfsQueue("scheduler");
  const std::array<uint64_t, 4> writes = (*loop)->WriteCounters();

  v1::RunAssignment assignment = Assignment((*loop)->path(), v1::RANDWRITE);
  assignment.mutable_cell()->mutable_queue()->set_scheduler(
      scheduler.find("[bfq]") == std::string::npos ? "bfq" : "none");
  v1::RunFinished f = Run(assignment);
  EXPECT_EQ(f.outcome(), v1::RUN_OUTCOME_FAILED);
  EXPECT_THAT(f.error(), HasSubstr(absl::StrCat(
                             "refused: ", (*loop)->path(), ": backing file changed from ", file_a,
                             " (inode ", a.st_ino, ") to ", file_b, " (inode ", b.st_ino, ")")));
  EXPECT_THAT(f.error(), HasSubstr("size changed from 64 MiB to 32 MiB"));
  EXPECT_THAT(f.error(), HasSubstr("until the agent is restarted"));
  EXPECT_EQ((*loop)->WriteCounters(), writes);
  EXPECT_EQ((*loop)->SysfsQueue("scheduler"), scheduler);
  EXPECT_EQ(testing::ReadFileOr(file_b), std::string(32 << 20, '\0'));

  // A re-registration does not make B acceptable.
  DeviceOffer again = executor_->OfferDevices();
  EXPECT_TRUE(again.offered.empty());
  ASSERT_EQ(again.not_offered.size(), 1u);
  EXPECT_THAT(again.not_offered[0].second, HasSubstr("backing file changed"));
  f = Run(assignment);
  EXPECT_THAT(f.error(), HasSubstr("was not offered at the agent's latest registration"));
  EXPECT_EQ((*loop)->WriteCounters(), writes);
}

TEST_F(RunExecutorTest, AScratchFileReplacedSinceRegistrationIsRefused) {
  const std::string file = dir_.File("data");
  std::ofstream(file) << std::string(1 << 20, '\0');
  Init({{file, "file"}});
  ASSERT_EQ(offer_.offered.size(), 1u);
  std::ofstream(file + ".new") << std::string(1 << 20, 'x');
  ASSERT_EQ(rename((file + ".new").c_str(), file.c_str()), 0);
  v1::RunFinished f = Run(Assignment(file, v1::RANDWRITE));
  EXPECT_EQ(f.outcome(), v1::RUN_OUTCOME_FAILED);
  EXPECT_THAT(f.error(), HasSubstr(absl::StrCat("refused: ", file, ": is another file: inode")));
  EXPECT_EQ(testing::ReadFileOr(file), std::string(1 << 20, 'x'));
}

TEST_F(RunExecutorTest, ADeviceMissingAtRegistrationIsNotOfferedAndRefused) {
  const std::string file = dir_.File("late");
  Init({{file, "file"}});
  EXPECT_TRUE(offer_.offered.empty());
  ASSERT_EQ(offer_.not_offered.size(), 1u);
  EXPECT_EQ(offer_.not_offered[0].first, file);
  std::ofstream(file) << std::string(8 << 20, 'x');  // appears after the registration
  v1::RunFinished f = Run(Assignment(file, v1::RANDWRITE));
  EXPECT_EQ(f.outcome(), v1::RUN_OUTCOME_FAILED);
  EXPECT_THAT(f.error(), HasSubstr(file + " was not offered at the agent's latest registration"));
  EXPECT_EQ(testing::ReadFileOr(file), std::string(8 << 20, 'x'));
  // The next registration records and offers it.
  EXPECT_EQ(executor_->OfferDevices().offered.size(), 1u);
  f = Run(Assignment(file));
  EXPECT_EQ(f.outcome(), v1::RUN_OUTCOME_SUCCEEDED) << f.error();
}

// Records what each run was given; succeeds without I/O.
class RecordingRunner final : public Runner {
 public:
  explicit RecordingRunner(std::vector<RunContext>& runs) : runs_(runs) {}
  absl::StatusOr<v1::RunResult> Run(const RunContext& ctx) override {
    runs_.push_back(ctx);
    return v1::RunResult();
  }

 private:
  std::vector<RunContext>& runs_;
};

// Through RunCell, a real device and a simulated one run repeat r with randseed + r
// (CellForRepeat), each on its prepared target.
TEST(RunExecutorRepeatTest, EveryRepeatRunsWithItsSeedOnRealAndSimulatedDevices) {
  TempDir dir("run_executor_test"), state("run_executor_state");
  const std::string file = dir.File("data");
  std::ofstream(file) << std::string(8 << 20, '\0');
  AgentConfig config;
  config.state_dir = state.path();
  config.devices = {{file, "file"}};
  config.sim_devices = {"sim:ssd"};
  auto journal = QueueSettingsJournal::Open(state.path());
  ASSERT_TRUE(journal.ok()) << journal.status();
  std::vector<RunContext> runs;
  RunExecutor executor(config, **journal, [&runs](const std::string&) -> std::unique_ptr<Runner> {
    return std::make_unique<RecordingRunner>(runs);
  });
  ASSERT_EQ(executor.OfferDevices().offered.size(), 1u);
  std::atomic<bool> cancel{false};
  for (const std::string& device : {file, std::string("sim:ssd")}) {
    v1::RunAssignment a = Assignment(device);
    a.mutable_cell()->mutable_job()->set_randseed(0x89);
    a.set_repeat(2);
    v1::RunFinished f = executor.Execute(a, cancel, [](const v1::Sample&) {});
    EXPECT_EQ(f.outcome(), v1::RUN_OUTCOME_SUCCEEDED) << device << ": " << f.error();
  }
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].cell.job().randseed(), 0x89u + 2);
  EXPECT_EQ(runs[0].target_size, uint64_t{8} << 20);
  EXPECT_EQ(runs[1].cell.job().randseed(), 0x89u + 2);
  EXPECT_EQ(runs[1].target_path, "sim:ssd");
  EXPECT_EQ(runs[1].target_size, engine::kSimulatedDeviceBytes);
}

// A simulated device offers exactly the schedulers the engine models, and is rotational
// when its model is (both from common/sim_vocabulary.h).
TEST(SimulatedDeviceFactsTest, FollowTheEnginesVocabulary) {
  const v1::DeviceFacts hdd = SimulatedDeviceFacts("sim:hdd-seed003");
  EXPECT_TRUE(hdd.simulated());
  EXPECT_TRUE(hdd.rotational());
  EXPECT_THAT(hdd.schedulers(), ::testing::ElementsAre("none", "mq-deadline", "bfq", "kyber"));
  EXPECT_FALSE(SimulatedDeviceFacts("sim:ssd-sata").rotational());
}

}  // namespace
}  // namespace blkbench
