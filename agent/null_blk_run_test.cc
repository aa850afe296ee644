// Runs on the agent's per-run null_blk device through RunExecutor, against the fake
// configfs kernel (agent/device/fake_null_blk.h: this machine has neither configfs nor the
// module), whose power-on adds a sparse regular file as /dev/nullb<N> for the executor's
// real I/O. The device is made with the cell's parameters in the kernel's order, and
// removed after a success, a failure and a cancel; a real crash (a child process that
// dies mid-run) leaves it to the next RecoverAll. The last test needs the real module: the
// host's, else a VM guest's (common/testing/in_guest.h).
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "agent/device/fake_null_blk.h"
#include "agent/run_executor.h"
#include "agent/runners.h"
#include "common/testing/in_guest.h"
#include "common/testing/loop_device.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace blkbench {
namespace {

using ::testing::AnyOf;
using ::testing::ElementsAre;
using ::testing::Eq;
using testing::FakeNullBlkKernel;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::StartsWith;
using testing::TempDir;

constexpr uint64_t kIoSize = 1 << 20;

// Seed 000's device, 16 MiB.
v1::RunAssignment Assignment() {
  v1::RunAssignment a;
  a.set_run_id(7);
  a.set_attempt(1);
  a.set_lease_id("L1");
  a.set_device_path(kNullBlkDevicePath);
  a.set_sample_interval_ms(50);
  v1::CellSpec* cell = a.mutable_cell();
  cell->mutable_target()->set_device_class("null_blk");
  for (const auto& [attr, value] :
       std::vector<std::pair<std::string, std::string>>{{"completion_nsec", "0"},
                                                        {"blocksize", "512"},
                                                        {"home_node", "0"},
                                                        {"irqmode", "0"},
                                                        {"submit_queues", "128"},
                                                        {"hw_queue_depth", "1024"},
                                                        {"size", "16"},
                                                        {"memory_backed", "0"},
                                                        {"queue_mode", "2"}}) {
    (*cell->mutable_device_params())["null_blk." + attr] = value;
  }
  (*cell->mutable_device_params())["engine.can_queue"] = "64";  // the engine's: not written
  v1::JobSpec* job = cell->mutable_job();
  job->set_rw(v1::READ);
  job->set_bs(4096);
  job->set_iodepth(4);
  job->set_numjobs(1);
  job->set_iodepth_batch_submit(1);
  job->set_iodepth_batch_complete_min(1);
  job->set_iodepth_batch_complete_max(4);
  job->set_ioengine(v1::IO_URING);
  job->set_thread(true);
  job->set_io_size(kIoSize);
  return a;
}

// What a run saw of the device while it ran, around the default runner (or instead of it).
struct Seen {
  std::string target;
  bool item_existed = false;
};

class NullBlkRunTest : public ::testing::Test {
 protected:
  void SetUp() override {
    paths_.configfs = tmp_.path() + "/configfs";
    paths_.dev = tmp_.path() + "/dev";
    kernel_ = std::make_unique<FakeNullBlkKernel>(paths_);
    config_.state_dir = tmp_.path() + "/state";
    config_.sim_devices.clear();
    config_.null_blk.enabled = true;
    config_.null_blk.configfs = paths_.configfs;
    config_.null_blk.dev = paths_.dev;
  }
  // The journal as the agent opens it (configfs an extra root), with the fake's rmdir for
  // configfs items. Not opened in SetUp: the crash test's child process must own it first.
  std::unique_ptr<QueueSettingsJournal> OpenJournal(FakeNullBlkKernel& kernel) {
    auto journal = QueueSettingsJournal::Open(config_.state_dir, SystemPaths(), {paths_.configfs},
                                              [this, &kernel](const std::string& p) {
                                                if (absl::StartsWith(p, paths_.nullb()))
                                                  return kernel.Rmdir(p);
                                                return rmdir(p.c_str()) == 0 ? 0 : errno;
                                              });
    EXPECT_TRUE(journal.ok()) << journal.status();
    return journal.ok() ? std::move(*journal) : nullptr;
  }
  // An executor whose runner notes what it ran on, then does `run` (the real executor by
  // default).
  void Init(std::function<absl::StatusOr<v1::RunResult>(const RunContext&)> run = nullptr) {
    mkdir(config_.state_dir.c_str(), 0700);
    journal_ = OpenJournal(*kernel_);
    ASSERT_NE(journal_, nullptr);
    run_ = std::move(run);
    executor_ = std::make_unique<RunExecutor>(
        config_, *journal_,
        [this](const std::string& device_class) -> std::unique_ptr<Runner> {
          return std::make_unique<Watching>(this, DefaultRunnerFactory()(device_class));
        },
        kernel_.get());
    offer_ = executor_->OfferDevices();
  }
  v1::RunFinished Run(const v1::RunAssignment& a) {
    return executor_->Execute(a, cancel_, [](const v1::Sample&) {});
  }
  std::vector<std::string> Items() const { return List(paths_.nullb()); }
  std::vector<std::string> Nodes() const { return List(paths_.dev); }
  static std::vector<std::string> List(const std::string& dir) {
    std::vector<std::string> out;
    for (const auto& e : std::filesystem::directory_iterator(dir)) {
      out.push_back(e.path().filename());
    }
    return out;
  }
  void ExpectNothingLeft() {
    EXPECT_THAT(Items(), IsEmpty());
    EXPECT_THAT(Nodes(), IsEmpty());
    absl::StatusOr<std::vector<std::string>> entries = journal_->settings_journal().List();
    ASSERT_TRUE(entries.ok()) << entries.status();
    EXPECT_THAT(*entries, IsEmpty());
  }

  class Watching final : public Runner {
   public:
    Watching(NullBlkRunTest* t, std::unique_ptr<Runner> inner) : t_(t), inner_(std::move(inner)) {}
    absl::StatusOr<v1::RunResult> Run(const RunContext& ctx) override {
      t_->seen_.target = ctx.target_path;
      t_->seen_.item_existed = std::filesystem::exists(t_->paths_.nullb() + "/blkbench-run-7-1");
      return t_->run_ ? t_->run_(ctx) : inner_->Run(ctx);
    }

   private:
    NullBlkRunTest* t_;
    std::unique_ptr<Runner> inner_;
  };

  TempDir tmp_{"null_blk_run"};
  NullBlkPaths paths_;
  std::unique_ptr<FakeNullBlkKernel> kernel_;
  AgentConfig config_;
  std::unique_ptr<QueueSettingsJournal> journal_;
  std::unique_ptr<RunExecutor> executor_;
  std::function<absl::StatusOr<v1::RunResult>(const RunContext&)> run_;
  DeviceOffer offer_;
  Seen seen_;
  std::atomic<bool> cancel_{false};
};

TEST_F(NullBlkRunTest, ARunGetsItsOwnDeviceMadeWithTheCellsParametersAndRemovedAfter) {
  Init();
  ASSERT_EQ(offer_.offered.size(), 1u);
  EXPECT_EQ(offer_.offered[0].path(), kNullBlkDevicePath);
  EXPECT_EQ(offer_.offered[0].device_class(), "null_blk");
  v1::RunFinished f = Run(Assignment());
  ASSERT_EQ(f.outcome(), v1::RUN_OUTCOME_SUCCEEDED) << f.error();
  EXPECT_EQ(seen_.target, paths_.dev + "/nullb0");
  EXPECT_TRUE(seen_.item_existed);
  // Every attribute before power, in the kernel's order (seed 000's), the engine's
  // parameter not written.
  EXPECT_THAT(kernel_->writes,
              ElementsAre("completion_nsec=0", "blocksize=512", "home_node=0", "irqmode=0",
                          "submit_queues=128", "hw_queue_depth=1024", "size=16", "memory_backed=0",
                          "queue_mode=2", "power=1"));
  EXPECT_EQ(f.result().io().read_bytes(), kIoSize);
  EXPECT_EQ(f.result().device().path(), paths_.dev + "/nullb0");
  EXPECT_EQ(f.result().device().device_class(), "null_blk");
  EXPECT_EQ(f.result().device().size_bytes(), uint64_t{16} << 20);
  ExpectNothingLeft();
  // The next run gets a device of its own again.
  f = Run(Assignment());
  ASSERT_EQ(f.outcome(), v1::RUN_OUTCOME_SUCCEEDED) << f.error();
  EXPECT_EQ(seen_.target, paths_.dev + "/nullb0");
  ExpectNothingLeft();
}

TEST_F(NullBlkRunTest, AFailedRunRemovesItsDevice) {
  Init([](const RunContext&) -> absl::StatusOr<v1::RunResult> {
    return absl::InternalError("the job's io_uring setup failed");
  });
  v1::RunFinished f = Run(Assignment());
  EXPECT_EQ(f.outcome(), v1::RUN_OUTCOME_FAILED);
  EXPECT_THAT(f.error(), HasSubstr("io_uring setup failed"));
  EXPECT_TRUE(seen_.item_existed);
  ExpectNothingLeft();
}

TEST_F(NullBlkRunTest, ACancelledRunRemovesItsDevice) {
  Init();
  cancel_.store(true);
  v1::RunFinished f = Run(Assignment());
  EXPECT_EQ(f.outcome(), v1::RUN_OUTCOME_CANCELED) << f.error();
  EXPECT_TRUE(seen_.item_existed);
  ExpectNothingLeft();
}

// The kernel refuses power-on (null_add_dev: a zero queue depth): the run fails saying
// so, nothing ran, nothing is left.
TEST_F(NullBlkRunTest, ADeviceTheKernelRefusesFailsTheRunAndLeavesNothing) {
  Init();
  v1::RunAssignment a = Assignment();
  (*a.mutable_cell()->mutable_device_params())["null_blk.hw_queue_depth"] = "0";
  v1::RunFinished f = Run(a);
  EXPECT_EQ(f.outcome(), v1::RUN_OUTCOME_FAILED);
  EXPECT_THAT(f.error(), HasSubstr("echo 1 > " + paths_.nullb() + "/blkbench-run-7-1/power"));
  EXPECT_TRUE(seen_.target.empty());
  ExpectNothingLeft();
}

// A real crash: a child process runs the assignment and dies (_exit) while its job runs,
// with the device made and journaled. The next agent's RecoverAll removes it.
TEST_F(NullBlkRunTest, ADeviceLeftByACrashedAgentIsRemovedByRecoverAll) {
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    Init([this](const RunContext& ctx) -> absl::StatusOr<v1::RunResult> {
      _exit(ctx.target_path == paths_.dev + "/nullb0" && seen_.item_existed ? 42 : 1);
    });
    Run(Assignment());
    _exit(2);  // not reached: the runner died
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  ASSERT_EQ(WEXITSTATUS(status), 42) << "the child did not die mid-run on its device";
  EXPECT_THAT(Items(), ElementsAre("blkbench-run-7-1"));
  EXPECT_THAT(Nodes(), ElementsAre("nullb0"));

  // The next agent: a new fake kernel object (nothing in memory survives), the same tree.
  FakeNullBlkKernel next(paths_);
  std::unique_ptr<QueueSettingsJournal> journal = OpenJournal(next);
  ASSERT_NE(journal, nullptr);
  absl::StatusOr<RecoveryReport> report = journal->RecoverAll();
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_THAT(report->restored, ElementsAre(NullBlkJournalEntry("blkbench-run-7-1")));
  EXPECT_THAT(Items(), IsEmpty());
  EXPECT_THAT(Nodes(), IsEmpty());
  EXPECT_THAT(*journal->settings_journal().List(), IsEmpty());
}

// Offered only while <configfs>/nullb exists (the module loaded), and not at all
// without a null_blk: section.
TEST_F(NullBlkRunTest, OfferedOnlyWhileConfigfsHasNullb) {
  std::filesystem::remove(paths_.nullb());
  Init();
  EXPECT_THAT(offer_.offered, IsEmpty());
  ASSERT_EQ(offer_.not_offered.size(), 1u);
  EXPECT_EQ(offer_.not_offered[0].first, kNullBlkDevicePath);
  EXPECT_THAT(offer_.not_offered[0].second, HasSubstr("modprobe null_blk nr_devices=0"));
  v1::RunFinished f = Run(Assignment());
  EXPECT_EQ(f.outcome(), v1::RUN_OUTCOME_FAILED);
  EXPECT_THAT(f.error(), HasSubstr("is missing"));

  std::filesystem::create_directories(paths_.nullb());  // modprobe null_blk
  EXPECT_EQ(executor_->OfferDevices().offered.size(), 1u);

  config_.null_blk.enabled = false;
  EXPECT_THAT(executor_->OfferDevices().offered, IsEmpty());
  EXPECT_THAT(executor_->OfferDevices().not_offered, IsEmpty());
  f = Run(Assignment());
  EXPECT_EQ(f.outcome(), v1::RUN_OUTCOME_FAILED);
  EXPECT_THAT(f.error(), HasSubstr("not on this agent's allowlist"));
}

// The real module: the host's where it is loaded, else a VM guest's.
TEST(NullBlkRealRunTest, ARunOnARealNullBlkDevice) {
  struct stat st;
  if (getuid() != 0) GTEST_SKIP() << "needs root";
  if (stat("/sys/kernel/config/nullb", &st) != 0) {
    if (!testing::InGuest()) return testing::RunInGuest(testing::NullBlkGuest());
    GTEST_SKIP() << "no /sys/kernel/config/nullb (configfs or the null_blk module is missing)";
  }
  TempDir state("null_blk_real_run");
  AgentConfig config;
  config.state_dir = state.path();
  config.sim_devices.clear();
  config.null_blk.enabled = true;
  auto journal = QueueSettingsJournal::Open(state.path());
  ASSERT_TRUE(journal.ok()) << journal.status();
  RunExecutor executor(config, **journal, DefaultRunnerFactory());
  ASSERT_EQ(executor.OfferDevices().offered.size(), 1u);
  v1::RunAssignment a = Assignment();
  a.mutable_cell()->mutable_job()->set_direct(true);
  // The kernel refuses more submit queues than CPUs (nullb_update_nr_hw_queues): seed
  // 000's 128 need its 128-core host.
  (*a.mutable_cell()->mutable_device_params())["null_blk.submit_queues"] = "1";
  std::atomic<bool> cancel{false};
  v1::RunFinished f = executor.Execute(a, cancel, [](const v1::Sample&) {});
  ASSERT_EQ(f.outcome(), v1::RUN_OUTCOME_SUCCEEDED) << f.error();
  EXPECT_EQ(f.result().io().read_bytes(), kIoSize);
  // The kernel names the disk after the item (nullb<index> before Linux 5.19).
  EXPECT_THAT(f.result().device().path(),
              AnyOf(Eq("/dev/blkbench-run-7-1"), StartsWith("/dev/nullb")));
  EXPECT_NE(stat("/sys/kernel/config/nullb/blkbench-run-7-1", &st), 0);
  EXPECT_THAT(*(*journal)->settings_journal().List(), IsEmpty());
}

}  // namespace
}  // namespace blkbench
