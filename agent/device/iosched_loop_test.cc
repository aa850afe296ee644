// Integration tests on REAL loop devices (root, losetup): every tunable of mq-deadline,
// kyber and bfq written through QueueSettingsJournal::Apply, read back from sysfs and in
// the applied settings, and the originals (an admin's tuning included) restored after
// success, after a failed Apply and after a crash. bfq runs in a VM guest on a host kernel
// without it (common/testing/in_guest.h).
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "agent/device/device_facts.h"
#include "agent/device/queue_settings.h"
#include "agent/device/testutil.h"
#include "common/iosched_tunables.h"
#include "common/testing/in_guest.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace blkbench {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// A value other than the kernel's default for each tunable, valid on any HZ (a time in ms
// is kept in jiffies: multiples of 20 ms read back exactly at HZ 100, 250, 300 and 1000).
const std::map<std::string, std::string>& NonDefaults() {
  static const auto* const kValues = new std::map<std::string, std::string>{
      {"read_expire", "200"},        {"write_expire", "3000"},     {"writes_starved", "3"},
      {"front_merges", "0"},         {"fifo_batch", "1"},          {"async_depth", "8"},
      {"prio_aging_expire", "5000"}, {"strict_guarantees", "1"},   {"low_latency", "0"},
      {"slice_idle", "12"},          {"timeout_sync", "200"},      {"max_budget", "4096"},
      {"fifo_expire_sync", "100"},   {"fifo_expire_async", "200"}, {"back_seek_max", "8192"},
      {"back_seek_penalty", "3"},    {"read_lat_nsec", "1000000"}, {"write_lat_nsec", "5000000"},
  };
  return *kValues;
}

class IoschedLoopTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<testing::LoopDevice>> loop =
        testing::LoopDevice::Attach(64 << 20);
    if (!loop.ok()) GTEST_SKIP() << "no loop device: " << loop.status();
    loop_ = *std::move(loop);
    journal_ = Open();
  }

  std::unique_ptr<QueueSettingsJournal> Open() {
    absl::StatusOr<std::unique_ptr<QueueSettingsJournal>> journal =
        QueueSettingsJournal::Open(tmp_.path() + "/state");
    EXPECT_TRUE(journal.ok()) << journal.status();
    return journal.ok() ? *std::move(journal) : nullptr;
  }

  std::string QueueDir() const { return "/sys/block/" + loop_->name() + "/queue"; }
  std::string Read(const std::string& attr) {
    absl::StatusOr<std::string> value = ReadAttribute(QueueDir() + "/" + attr);
    EXPECT_TRUE(value.ok()) << attr << ": " << value.status();
    return value.ok() ? *value : "";
  }
  void Write(const std::string& attr, const std::string& value) {
    ASSERT_TRUE(WriteAttribute(QueueDir() + "/" + attr, value).ok()) << attr;
  }
  std::string Scheduler() { return ParseSchedulers(Read("scheduler"))->current; }
  bool Offers(const std::string& scheduler) {
    absl::StatusOr<SchedulerList> list = ParseSchedulers(Read("scheduler"));
    return list.ok() && std::find(list->available.begin(), list->available.end(), scheduler) !=
                            list->available.end();
  }

  // The device as an admin left it: mq-deadline with fifo_batch 7 and read_expire 100.
  void TuneByHand() {
    Write("scheduler", "mq-deadline");
    Write("iosched/fifo_batch", "7");
    Write("iosched/read_expire", "100");
  }
  std::map<std::string, std::string> Tunables() {
    google::protobuf::Map<std::string, std::string> values;
    ReadIoschedValues(QueueDir(), &values);
    return {values.begin(), values.end()};
  }

  // `scheduler` with every one of its tunables set to NonDefaults(), but `skip`.
  static v1::QueueSettings EveryTunable(const std::string& scheduler,
                                        const std::string& skip = "") {
    v1::QueueSettings wanted;
    wanted.set_scheduler(scheduler);
    for (std::string_view name : IoschedTunableNames(scheduler)) {
      const std::string n(name);
      if (n == skip || !NonDefaults().contains(n)) continue;
      (*wanted.mutable_iosched())[n] = NonDefaults().at(n);
    }
    return wanted;
  }

  // Applies `wanted`, checks every tunable in sysfs and in the applied settings, restores,
  // and checks the device is as TuneByHand left it, every tunable included.
  void ApplyReadBackRestore(const v1::QueueSettings& wanted) {
    TuneByHand();
    const std::map<std::string, std::string> before = Tunables();
    absl::StatusOr<v1::DeviceFacts> facts = ReadDeviceFacts(loop_->path(), "loop");
    ASSERT_TRUE(facts.ok()) << facts.status();
    EXPECT_EQ(facts->queue().iosched().at("fifo_batch"), "7");  // the device's facts

    v1::QueueSettings applied;
    absl::Status status = journal_->Apply(*facts, wanted, &applied);
    ASSERT_TRUE(status.ok()) << status;
    EXPECT_EQ(Scheduler(), wanted.scheduler());
    EXPECT_EQ(applied.scheduler(), wanted.scheduler());
    for (const auto& [name, value] : wanted.iosched()) {
      EXPECT_EQ(Read("iosched/" + name), value) << name;
      EXPECT_EQ(applied.iosched().at(name), value) << name;
    }
    // The applied settings record every file of iosched/, set or not.
    const std::map<std::string, std::string> in_force(applied.iosched().begin(),
                                                      applied.iosched().end());
    EXPECT_EQ(in_force, Tunables());

    status = journal_->Restore(loop_->name());
    ASSERT_TRUE(status.ok()) << status;
    EXPECT_EQ(Scheduler(), "mq-deadline");
    EXPECT_EQ(Tunables(), before);
    EXPECT_THAT(*ListDirectory(tmp_.path() + "/state"), ElementsAre(".lock"));
  }

  testing::TempDir tmp_;
  std::unique_ptr<testing::LoopDevice> loop_;
  std::unique_ptr<QueueSettingsJournal> journal_;
};

TEST_F(IoschedLoopTest, EveryDeadlineTunableIsAppliedReadBackAndRestored) {
  if (!Offers("mq-deadline")) GTEST_SKIP() << "no mq-deadline";
  v1::QueueSettings wanted = EveryTunable("mq-deadline");
  // nr_requests resets async_depth (dd_depth_updated): the tunables are written after it.
  wanted.set_nr_requests(64);
  ASSERT_EQ(wanted.iosched().size(), 7u);
  ApplyReadBackRestore(wanted);
}

TEST_F(IoschedLoopTest, EveryKyberTunableIsAppliedReadBackAndRestored) {
  if (!Offers("kyber")) GTEST_SKIP() << "no kyber";
  v1::QueueSettings wanted = EveryTunable("kyber");
  ASSERT_EQ(wanted.iosched().size(), 2u);
  ApplyReadBackRestore(wanted);
}

TEST_F(IoschedLoopTest, EveryBfqTunableIsAppliedReadBackAndRestored) {
  if (!Offers("bfq")) {
    if (!testing::InGuest()) return testing::RunInGuest(testing::LoopAndBfqGuest());
    GTEST_SKIP() << "bfq is not available";
  }
  // strict_guarantees 1 raises slice_idle to 8 ms unless it is written first.
  v1::QueueSettings wanted = EveryTunable("bfq", "slice_idle_us");
  ASSERT_EQ(wanted.iosched().size(), 9u);
  ApplyReadBackRestore(wanted);
  v1::QueueSettings us;
  us.set_scheduler("bfq");
  (*us.mutable_iosched())["slice_idle_us"] = "500";
  ApplyReadBackRestore(us);
}

// The tunables of the scheduler already in force, without switching it: only they change.
TEST_F(IoschedLoopTest, TunablesWithoutASchedulerSwitch) {
  if (!Offers("mq-deadline")) GTEST_SKIP() << "no mq-deadline";
  v1::QueueSettings wanted;
  wanted.set_scheduler("mq-deadline");
  (*wanted.mutable_iosched())["fifo_batch"] = "1";
  ApplyReadBackRestore(wanted);
}

// read_expire is kept in jiffies: 1 ms reads back as 4 at HZ 250. The run fails with what
// the kernel made of it, and the switch and the tunables written before are rolled back.
TEST_F(IoschedLoopTest, ATunableTheKernelRoundsFailsAndRollsBack) {
  if (!Offers("kyber")) GTEST_SKIP() << "no kyber";
  Write("scheduler", "kyber");
  Write("iosched/read_lat_nsec", "3000000");
  const std::map<std::string, std::string> kyber = Tunables();
  absl::StatusOr<v1::DeviceFacts> facts = ReadDeviceFacts(loop_->path(), "loop");
  ASSERT_TRUE(facts.ok()) << facts.status();
  v1::QueueSettings wanted;
  wanted.set_scheduler("mq-deadline");
  (*wanted.mutable_iosched())["fifo_batch"] = "1";
  (*wanted.mutable_iosched())["read_expire"] = "1";
  v1::QueueSettings applied;
  absl::Status status = journal_->Apply(*facts, wanted, &applied);
  if (status.ok()) {
    ASSERT_TRUE(journal_->Restore(loop_->name()).ok());
    GTEST_SKIP() << "HZ is 1000: read_expire 1 is exact";
  }
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_THAT(status.message(), HasSubstr(loop_->name() + ": the kernel made read_expire 1 into"));
  EXPECT_THAT(status.message(), HasSubstr("HZ is below 1000"));
  EXPECT_EQ(Scheduler(), "kyber");
  EXPECT_EQ(Tunables(), kyber);
  EXPECT_THAT(*ListDirectory(tmp_.path() + "/state"), ElementsAre(".lock"));
}

// Refused before anything changes: another scheduler's tunable.
TEST_F(IoschedLoopTest, AnotherSchedulersTunableChangesNothing) {
  if (!Offers("mq-deadline")) GTEST_SKIP() << "no mq-deadline";
  TuneByHand();
  const std::map<std::string, std::string> before = Tunables();
  absl::StatusOr<v1::DeviceFacts> facts = ReadDeviceFacts(loop_->path(), "loop");
  ASSERT_TRUE(facts.ok()) << facts.status();
  v1::QueueSettings wanted;  // no scheduler: the one in force, mq-deadline
  (*wanted.mutable_iosched())["read_lat_nsec"] = "1000";
  v1::QueueSettings applied;
  absl::Status status = journal_->Apply(*facts, wanted, &applied);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_THAT(status.message(),
              HasSubstr("key 'read_lat_nsec' is a tunable of kyber, not of scheduler mq-deadline"));
  EXPECT_EQ(Tunables(), before);
  EXPECT_THAT(*ListDirectory(tmp_.path() + "/state"), ElementsAre(".lock"));
}

// An agent SIGKILLed mid-run (after Apply, before Restore): the next one's RecoverAll puts
// back the scheduler and every tunable.
TEST_F(IoschedLoopTest, AKilledAgentsTunablesAreRestoredAtTheNextStart) {
  if (!Offers("kyber") || !Offers("mq-deadline")) GTEST_SKIP() << "no kyber or mq-deadline";
  TuneByHand();
  const std::map<std::string, std::string> before = Tunables();
  journal_.reset();  // the state directory is the child's now
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    close(ready[0]);
    std::unique_ptr<QueueSettingsJournal> journal = Open();
    absl::StatusOr<v1::DeviceFacts> facts = ReadDeviceFacts(loop_->path(), "loop");
    v1::QueueSettings applied;
    if (journal == nullptr || !facts.ok() ||
        !journal->Apply(*facts, EveryTunable("kyber"), &applied).ok()) {
      _exit(2);
    }
    const char ok = 1;
    if (write(ready[1], &ok, 1) != 1) _exit(3);
    for (;;) pause();  // until SIGKILLed
  }
  close(ready[1]);
  char c = 0;
  const bool applied = read(ready[0], &c, 1) == 1;
  close(ready[0]);
  if (applied) {
    EXPECT_EQ(Scheduler(), "kyber");
    EXPECT_EQ(Read("iosched/read_lat_nsec"), "1000000");
  }
  kill(child, SIGKILL);
  int wstatus = 0;
  ASSERT_EQ(waitpid(child, &wstatus, 0), child);
  ASSERT_TRUE(applied) << "the child could not apply the settings (exit "
                       << (WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -1) << ")";
  EXPECT_TRUE(WIFSIGNALED(wstatus) && WTERMSIG(wstatus) == SIGKILL);

  journal_ = Open();
  absl::StatusOr<RecoveryReport> report = journal_->RecoverAll();
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_THAT(report->restored, ElementsAre("queue-" + loop_->name()));
  EXPECT_EQ(Scheduler(), "mq-deadline");
  EXPECT_EQ(Tunables(), before);
}

}  // namespace
}  // namespace blkbench
