// Tests for applying and restoring queue settings on a fake sysfs tree (writing an attribute
// just replaces the file, so "bfq" reads back as a lone current scheduler).
#include "agent/device/queue_settings.h"

#include <unistd.h>

#include "agent/device/device_facts.h"
#include "agent/device/testutil.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace blkbench {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

class QueueSettingsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    paths_ = testing::FakePaths(tmp_.path());
    testing::WriteFile(paths_.procfs + "/sys/kernel/random/boot_id", "boot-1\n");
    disk_ = testing::MakeFakeDisk(paths_, "loop0", "7:0");
    testing::WriteFile(disk_ + "/queue/iosched/fifo_batch", "16\n");
    testing::WriteFile(disk_ + "/queue/iosched/read_expire", "500\n");
    dev_.set_kernel_name("loop0");
    dev_.set_is_block(true);
    journal_ = Open();
  }

  std::unique_ptr<QueueSettingsJournal> Open() {
    absl::StatusOr<std::unique_ptr<QueueSettingsJournal>> journal =
        QueueSettingsJournal::Open(tmp_.path() + "/state", paths_);
    EXPECT_TRUE(journal.ok()) << journal.status();
    return journal.ok() ? *std::move(journal) : nullptr;
  }

  std::string Queue(const std::string& attr) { return testing::ReadFile(disk_ + "/queue/" + attr); }

  static v1::QueueSettings Wanted(const std::string& scheduler, uint32_t nr_requests,
                                  uint32_t max_sectors_kb) {
    v1::QueueSettings wanted;
    wanted.set_scheduler(scheduler);
    wanted.set_nr_requests(nr_requests);
    wanted.set_max_sectors_kb(max_sectors_kb);
    return wanted;
  }

  void ExpectOriginals() {
    EXPECT_EQ(ParseSchedulers(Queue("scheduler"))->current, "mq-deadline");
    EXPECT_EQ(Queue("nr_requests"), "64\n");
    EXPECT_EQ(Queue("max_sectors_kb"), "1280\n");
    EXPECT_EQ(Queue("iosched/fifo_batch"), "16\n");
  }

  testing::TempDir tmp_;
  SystemPaths paths_;
  std::string disk_;
  v1::DeviceFacts dev_;
  std::unique_ptr<QueueSettingsJournal> journal_;
};

TEST_F(QueueSettingsTest, ApplyReportsWhatIsInForceAndRestorePutsBackOriginals) {
  v1::QueueSettings applied;
  ASSERT_TRUE(journal_->Apply(dev_, Wanted("bfq", 32, 64), &applied).ok());
  EXPECT_EQ(applied.scheduler(), "bfq");
  EXPECT_EQ(applied.nr_requests(), 32u);
  EXPECT_EQ(applied.max_sectors_kb(), 64u);
  EXPECT_EQ(Queue("scheduler"), "bfq\n");
  // Tuning done during the run (or by the new elevator) is undone too.
  testing::WriteFile(disk_ + "/queue/iosched/fifo_batch", "1\n");

  ASSERT_TRUE(journal_->Restore("loop0").ok());
  ExpectOriginals();
  EXPECT_THAT(*ListDirectory(tmp_.path() + "/state"), ElementsAre(".lock"));
}

TEST_F(QueueSettingsTest, JournalIsWrittenBeforeAnythingChanges) {
  v1::QueueSettings applied;
  ASSERT_TRUE(journal_->Apply(dev_, Wanted("kyber", 0, 256), &applied).ok());
  EXPECT_EQ(applied.nr_requests(), 64u);  // untouched field reads back as it is
  std::string text = testing::ReadFile(tmp_.path() + "/state/queue-loop0.journal");
  EXPECT_THAT(text, HasSubstr("queue/scheduler\tmq-deadline\n"));
  EXPECT_THAT(text, HasSubstr("queue/nr_requests\t64\n"));
  EXPECT_THAT(text, HasSubstr("queue/iosched/fifo_batch\t16\n"));
  EXPECT_THAT(text, HasSubstr("/dev\t7:0\n"));
  // Restore order: scheduler, nr_requests, tunables, max_sectors_kb.
  EXPECT_LT(text.find("scheduler\t"), text.find("nr_requests\t"));
  EXPECT_LT(text.find("nr_requests\t"), text.find("fifo_batch\t"));
  EXPECT_LT(text.find("fifo_batch\t"), text.find("max_sectors_kb\t"));
}

TEST_F(QueueSettingsTest, UnknownSchedulerChangesNothing) {
  v1::QueueSettings applied;
  absl::Status status = journal_->Apply(dev_, Wanted("cfq", 32, 0), &applied);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("\"cfq\""));
  EXPECT_THAT(status.message(), HasSubstr("none, mq-deadline, kyber, bfq"));
  ExpectOriginals();
  EXPECT_FALSE(PathExists(tmp_.path() + "/state/queue-loop0.journal"));
}

TEST_F(QueueSettingsTest, MaxSectorsAboveTheHardwareLimitChangesNothing) {
  v1::QueueSettings applied;
  absl::Status status = journal_->Apply(dev_, Wanted("bfq", 0, 4096), &applied);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("max_sectors_kb 4096"));
  ExpectOriginals();
}

TEST_F(QueueSettingsTest, FailedWriteRollsBackAndAFailedRollbackStaysJournaled) {
  // nr_requests becomes a symlink: readable, but WriteAttribute (O_NOFOLLOW) cannot write it,
  // so Apply fails after switching the scheduler, and so does the rollback of nr_requests.
  const std::string nr_requests = disk_ + "/queue/nr_requests";
  ASSERT_EQ(unlink(nr_requests.c_str()), 0);
  testing::WriteFile(tmp_.path() + "/nr_requests", "64\n");
  testing::Symlink(tmp_.path() + "/nr_requests", nr_requests);

  v1::QueueSettings applied;
  absl::Status status = journal_->Apply(dev_, Wanted("bfq", 32, 0), &applied);
  EXPECT_FALSE(status.ok());
  EXPECT_THAT(status.message(), HasSubstr("refused nr_requests=32"));
  EXPECT_THAT(status.message(), HasSubstr("rolling back failed too"));
  EXPECT_EQ(applied.ByteSizeLong(), 0u);
  // Every other original was still written back...
  EXPECT_EQ(Queue("scheduler"), "mq-deadline\n");
  // ...and the entry stays, so the next start retries it.
  ASSERT_EQ(unlink(nr_requests.c_str()), 0);
  testing::WriteFile(nr_requests, "32\n");
  journal_.reset();
  journal_ = Open();
  absl::StatusOr<RecoveryReport> report = journal_->RecoverAll();
  ASSERT_TRUE(report.ok());
  EXPECT_THAT(report->restored, ElementsAre("queue-loop0"));
  ExpectOriginals();
}

TEST_F(QueueSettingsTest, UnrestoredSettingsBlockTheNextApply) {
  v1::QueueSettings applied;
  ASSERT_TRUE(journal_->Apply(dev_, Wanted("bfq", 0, 0), &applied).ok());
  absl::Status status = journal_->Apply(dev_, Wanted("kyber", 0, 0), &applied);
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(status.message(), HasSubstr("loop0"));
  EXPECT_EQ(Queue("scheduler"), "bfq\n");
  ASSERT_TRUE(journal_->Restore("loop0").ok());
  ExpectOriginals();
}

TEST_F(QueueSettingsTest, CrashedAgentIsRecoveredByTheNextOne) {
  v1::QueueSettings applied;
  ASSERT_TRUE(journal_->Apply(dev_, Wanted("bfq", 32, 64), &applied).ok());
  journal_.reset();  // the agent dies without restoring
  journal_ = Open();
  absl::StatusOr<RecoveryReport> report = journal_->RecoverAll();
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_THAT(report->restored, ElementsAre("queue-loop0"));
  ExpectOriginals();
}

TEST_F(QueueSettingsTest, PartitionSettingsLiveOnItsDisk) {
  testing::MakeFakePartition(paths_, disk_, "loop0p1", "259:0");
  dev_.set_kernel_name("loop0p1");
  v1::QueueSettings applied;
  ASSERT_TRUE(journal_->Apply(dev_, Wanted("bfq", 0, 0), &applied).ok());
  EXPECT_EQ(*journal_->EntryName("loop0p1"), "queue-loop0");
  v1::DeviceFacts whole = dev_;
  whole.set_kernel_name("loop0");
  EXPECT_EQ(journal_->Apply(whole, Wanted("kyber", 0, 0), &applied).code(),
            absl::StatusCode::kFailedPrecondition);
  ASSERT_TRUE(journal_->Restore("loop0p1").ok());
  ExpectOriginals();
}

TEST_F(QueueSettingsTest, OnlyWhatChangesIsJournaled) {
  v1::QueueSettings applied;
  ASSERT_TRUE(journal_->Apply(dev_, Wanted("mq-deadline", 0, 256), &applied).ok());
  std::string text = testing::ReadFile(tmp_.path() + "/state/queue-loop0.journal");
  EXPECT_THAT(text, HasSubstr("max_sectors_kb\t1280\n"));
  EXPECT_THAT(text, Not(HasSubstr("scheduler")));
  EXPECT_THAT(text, Not(HasSubstr("nr_requests")));
  ASSERT_TRUE(journal_->Restore("loop0").ok());
  ExpectOriginals();
}

TEST_F(QueueSettingsTest, NothingWantedJournalsNothing) {
  v1::QueueSettings applied;
  ASSERT_TRUE(journal_->Apply(dev_, v1::QueueSettings(), &applied).ok());
  EXPECT_EQ(applied.scheduler(), "mq-deadline");
  EXPECT_EQ(applied.max_sectors_kb(), 1280u);
  EXPECT_THAT(*ListDirectory(tmp_.path() + "/state"), ElementsAre(".lock"));
}

TEST_F(QueueSettingsTest, RegularFilesAreANoOp) {
  v1::DeviceFacts file;
  file.set_path(tmp_.path() + "/scratch");
  v1::QueueSettings applied = Wanted("stale", 1, 1);
  ASSERT_TRUE(journal_->Apply(file, Wanted("bfq", 32, 64), &applied).ok());
  EXPECT_EQ(applied.ByteSizeLong(), 0u);
  EXPECT_TRUE(journal_->Restore("whatever").ok());
}

TEST_F(QueueSettingsTest, KernelNamesCannotEscapeSysfs) {
  dev_.set_kernel_name("../../../etc");
  v1::QueueSettings applied;
  EXPECT_EQ(journal_->Apply(dev_, Wanted("bfq", 0, 0), &applied).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(journal_->Restore("../x").code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(QueueSettingsTest, DeviceFactsFeedApplyDirectly) {
  absl::StatusOr<v1::DeviceFacts> facts = ReadBlockDeviceFacts(disk_);
  ASSERT_TRUE(facts.ok());
  v1::QueueSettings applied;
  ASSERT_TRUE(journal_->Apply(*facts, Wanted("none", 0, 0), &applied).ok());
  EXPECT_EQ(applied.scheduler(), "none");
  ASSERT_TRUE(journal_->Restore(facts->kernel_name()).ok());
  ExpectOriginals();
}

}  // namespace
}  // namespace blkbench
