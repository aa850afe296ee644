// Tests for the durable settings journal, on a fake sysfs tree where writing a tunable is just
// writing a file.
#include "agent/device/settings_journal.h"

#include <sys/stat.h>
#include <unistd.h>

#include "agent/device/testutil.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace blkbench {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;

class SettingsJournalTest : public ::testing::Test {
 protected:
  void SetUp() override {
    paths_ = testing::FakePaths(tmp_.path());
    state_ = tmp_.path() + "/state";
    testing::WriteFile(BootIdPath(), "boot-1\n");
    testing::WriteFile(Attr("dev"), "7:0\n");
    testing::WriteFile(Attr("scheduler"), "bfq\n");
    testing::WriteFile(Attr("nr_requests"), "32\n");
  }

  std::string Attr(const std::string& name) const { return paths_.sysfs + "/block/loop0/" + name; }
  std::string BootIdPath() const { return paths_.procfs + "/sys/kernel/random/boot_id"; }

  std::unique_ptr<SettingsJournal> OpenJournal() {
    absl::StatusOr<std::unique_ptr<SettingsJournal>> journal =
        SettingsJournal::Open(state_, {paths_.sysfs}, paths_);
    EXPECT_TRUE(journal.ok()) << journal.status();
    return journal.ok() ? *std::move(journal) : nullptr;
  }

  JournalEntry Entry() const {
    JournalEntry entry;
    entry.name = "queue-loop0";
    entry.guards = {{Attr("dev"), "7:0"}};
    entry.originals = {{Attr("scheduler"), "mq-deadline"}, {Attr("nr_requests"), "64"}};
    return entry;
  }

  testing::TempDir tmp_;
  SystemPaths paths_;
  std::string state_;
};

TEST_F(SettingsJournalTest, RecordThenRestoreWritesOriginalsAndRemovesTheEntry) {
  std::unique_ptr<SettingsJournal> journal = OpenJournal();
  ASSERT_TRUE(journal->Record(Entry()).ok());
  EXPECT_TRUE(journal->Contains("queue-loop0"));
  struct stat st;
  ASSERT_EQ(stat((state_ + "/queue-loop0.journal").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  ASSERT_EQ(stat(state_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);

  absl::StatusOr<JournalEntry> loaded = journal->Load("queue-loop0");
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->originals, Entry().originals);
  EXPECT_EQ(loaded->boot_id, "boot-1");

  ASSERT_TRUE(journal->Restore("queue-loop0").ok());
  EXPECT_EQ(testing::ReadFile(Attr("scheduler")), "mq-deadline\n");
  EXPECT_EQ(testing::ReadFile(Attr("nr_requests")), "64\n");
  EXPECT_FALSE(journal->Contains("queue-loop0"));
  EXPECT_THAT(*journal->List(), IsEmpty());
  // Restoring again is a no-op.
  EXPECT_TRUE(journal->Restore("queue-loop0").ok());
}

TEST_F(SettingsJournalTest, SecondRecordForTheSameObjectIsRefused) {
  std::unique_ptr<SettingsJournal> journal = OpenJournal();
  ASSERT_TRUE(journal->Record(Entry()).ok());
  JournalEntry again = Entry();
  again.originals = {{Attr("scheduler"), "bfq"}};  // would overwrite the true originals
  EXPECT_TRUE(absl::IsAlreadyExists(journal->Record(again)));
  EXPECT_EQ(journal->Load("queue-loop0")->originals, Entry().originals);
}

TEST_F(SettingsJournalTest, RecoverAllAfterACrashRestoresLeftovers) {
  {
    std::unique_ptr<SettingsJournal> journal = OpenJournal();
    ASSERT_TRUE(journal->Record(Entry()).ok());
    // The "agent" dies here without restoring; a half-written temp file is left too.
    testing::WriteFile(state_ + "/.queue-loop1.journal.tmp", "blkbench-settings-jour");
  }
  std::unique_ptr<SettingsJournal> journal = OpenJournal();
  EXPECT_NE(access((state_ + "/.queue-loop1.journal.tmp").c_str(), F_OK), 0);
  absl::StatusOr<RecoveryReport> report = journal->RecoverAll();
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_TRUE(report->ok());
  EXPECT_THAT(report->restored, ElementsAre("queue-loop0"));
  EXPECT_EQ(testing::ReadFile(Attr("scheduler")), "mq-deadline\n");
  EXPECT_EQ(testing::ReadFile(Attr("nr_requests")), "64\n");
  EXPECT_THAT(*journal->List(), IsEmpty());
}

TEST_F(SettingsJournalTest, EntryFromAnEarlierBootIsDroppedWithoutWriting) {
  {
    std::unique_ptr<SettingsJournal> journal = OpenJournal();
    ASSERT_TRUE(journal->Record(Entry()).ok());
  }
  testing::WriteFile(BootIdPath(), "boot-2\n");
  std::unique_ptr<SettingsJournal> journal = OpenJournal();
  absl::StatusOr<RecoveryReport> report = journal->RecoverAll();
  ASSERT_TRUE(report.ok());
  EXPECT_THAT(report->restored, IsEmpty());
  ASSERT_THAT(report->stale, SizeIs(1));
  EXPECT_THAT(report->stale[0], HasSubstr("earlier boot"));
  EXPECT_EQ(testing::ReadFile(Attr("scheduler")), "bfq\n");
  EXPECT_THAT(*journal->List(), IsEmpty());
}

TEST_F(SettingsJournalTest, EntryForAReplacedOrVanishedDeviceIsStale) {
  std::unique_ptr<SettingsJournal> journal = OpenJournal();
  ASSERT_TRUE(journal->Record(Entry()).ok());
  testing::WriteFile(Attr("dev"), "7:9\n");
  absl::StatusOr<RecoveryReport> report = journal->RecoverAll();
  ASSERT_TRUE(report.ok());
  ASSERT_THAT(report->stale, SizeIs(1));
  EXPECT_THAT(report->stale[0], HasSubstr("different device"));
  EXPECT_EQ(testing::ReadFile(Attr("scheduler")), "bfq\n");

  ASSERT_TRUE(journal->Record(Entry()).ok());
  unlink(Attr("dev").c_str());
  EXPECT_TRUE(journal->Restore("queue-loop0").ok());
  EXPECT_FALSE(journal->Contains("queue-loop0"));
  EXPECT_EQ(testing::ReadFile(Attr("scheduler")), "bfq\n");
}

TEST_F(SettingsJournalTest, FailedWriteKeepsTheEntryAndStillWritesTheRest) {
  std::unique_ptr<SettingsJournal> journal = OpenJournal();
  JournalEntry entry = Entry();
  entry.originals.insert(entry.originals.begin(), {Attr("gone/iosched"), "1"});
  ASSERT_TRUE(journal->Record(entry).ok());
  absl::Status status = journal->Restore("queue-loop0");
  EXPECT_FALSE(status.ok());
  EXPECT_THAT(status.message(), HasSubstr("gone/iosched"));
  EXPECT_THAT(status.message(), HasSubstr("entry kept"));
  EXPECT_TRUE(journal->Contains("queue-loop0"));
  EXPECT_EQ(testing::ReadFile(Attr("scheduler")), "mq-deadline\n");

  absl::StatusOr<RecoveryReport> report = journal->RecoverAll();
  ASSERT_TRUE(report.ok());
  EXPECT_FALSE(report->ok());
  EXPECT_THAT(report->failed, SizeIs(1));
}

TEST_F(SettingsJournalTest, PathsOutsideTheAllowedRootsAreNeverWritten) {
  std::unique_ptr<SettingsJournal> journal = OpenJournal();
  JournalEntry entry = Entry();
  entry.originals.push_back({tmp_.path() + "/etc/passwd", "pwned"});
  EXPECT_EQ(journal->Record(entry).code(), absl::StatusCode::kInvalidArgument);
  entry.originals.back().path = paths_.sysfs + "/block/../../etc/passwd";
  EXPECT_EQ(journal->Record(entry).code(), absl::StatusCode::kInvalidArgument);
  entry.originals.back().path = paths_.sysfs + "x/y";
  EXPECT_EQ(journal->Record(entry).code(), absl::StatusCode::kInvalidArgument);

  // A tampered journal file is refused as well, and nothing of it is written.
  JournalEntry evil = Entry();
  evil.originals.push_back({tmp_.path() + "/victim", "pwned"});
  testing::WriteFile(tmp_.path() + "/victim", "safe\n");
  testing::WriteFile(state_ + "/queue-loop0.journal", SerializeJournalEntry(evil));
  absl::StatusOr<RecoveryReport> report = journal->RecoverAll();
  ASSERT_TRUE(report.ok());
  ASSERT_THAT(report->failed, SizeIs(1));
  EXPECT_THAT(report->failed[0], HasSubstr("refusing to restore"));
  EXPECT_EQ(testing::ReadFile(tmp_.path() + "/victim"), "safe\n");
  EXPECT_EQ(testing::ReadFile(Attr("scheduler")), "bfq\n");
}

TEST_F(SettingsJournalTest, CorruptEntriesAreReportedAndKept) {
  std::unique_ptr<SettingsJournal> journal = OpenJournal();
  std::string text = SerializeJournalEntry(Entry());
  testing::WriteFile(state_ + "/queue-loop0.journal", text.substr(0, text.size() - 4));
  absl::StatusOr<RecoveryReport> report = journal->RecoverAll();
  ASSERT_TRUE(report.ok());
  ASSERT_THAT(report->failed, SizeIs(1));
  EXPECT_THAT(report->failed[0], HasSubstr("truncated"));
  EXPECT_TRUE(journal->Contains("queue-loop0"));
}

TEST_F(SettingsJournalTest, BadNamesAreRefused) {
  std::unique_ptr<SettingsJournal> journal = OpenJournal();
  for (const char* name : {"", ".hidden", "a/b", "../x", "a b"}) {
    JournalEntry entry = Entry();
    entry.name = name;
    EXPECT_EQ(journal->Record(entry).code(), absl::StatusCode::kInvalidArgument) << name;
  }
}

TEST_F(SettingsJournalTest, OnlyOneOwnerPerDirectory) {
  std::unique_ptr<SettingsJournal> first = OpenJournal();
  absl::StatusOr<std::unique_ptr<SettingsJournal>> second =
      SettingsJournal::Open(state_, {paths_.sysfs}, paths_);
  EXPECT_EQ(second.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(second.status().message(), HasSubstr("in use"));
  first.reset();
  EXPECT_TRUE(SettingsJournal::Open(state_, {paths_.sysfs}, paths_).ok());
}

TEST_F(SettingsJournalTest, GroupWritableDirectoryIsRefused) {
  testing::MakeDirs(state_);
  chmod(state_.c_str(), 0777);
  absl::StatusOr<std::unique_ptr<SettingsJournal>> journal =
      SettingsJournal::Open(state_, {paths_.sysfs}, paths_);
  EXPECT_EQ(journal.status().code(), absl::StatusCode::kFailedPrecondition);
}

TEST(JournalFormatTest, RoundTripsValuesWithAwkwardCharacters) {
  JournalEntry entry;
  entry.name = "cgroup-run:42";
  entry.boot_id = "b";
  entry.originals = {{"/sys/fs/cgroup/a b/io.max", "8:16 rbps=max\twbps=1\nx"}};
  entry.guards = {{"/sys/x", ""}};
  absl::StatusOr<JournalEntry> parsed = ParseJournalEntry(SerializeJournalEntry(entry));
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->name, entry.name);
  EXPECT_EQ(parsed->originals, entry.originals);
  EXPECT_EQ(parsed->guards, entry.guards);
  EXPECT_FALSE(ParseJournalEntry("something else\n").ok());
  EXPECT_THAT(parsed->cgroups, IsEmpty());
}

TEST(JournalFormatTest, RoundTripsCgroupDirectories) {
  JournalEntry entry;
  entry.name = "cgroup-run-7-1";
  entry.cgroups = {{"/sys/fs/cgroup/blkio/blkbench/run-7-1/g 0", "tasks", "/sys/fs/cgroup/blkio"},
                   {"/sys/fs/cgroup/blkbench", "cgroup.procs", "/sys/fs/cgroup", true}};
  const std::string text = SerializeJournalEntry(entry);
  EXPECT_THAT(text,
              HasSubstr("cgroup\t/sys/fs/cgroup/blkbench\tcgroup.procs\t/sys/fs/cgroup\t1\n"));
  absl::StatusOr<JournalEntry> parsed = ParseJournalEntry(text);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->cgroups, entry.cgroups);
  EXPECT_FALSE(
      ParseJournalEntry("blkbench-settings-journal 1\ncgroup\t/a\ttasks\t/b\t2\nend\n").ok());
  EXPECT_FALSE(ParseJournalEntry("blkbench-settings-journal 1\ncgroup\t/a\ttasks\nend\n").ok());
  EXPECT_FALSE(ParseJournalEntry(SerializeJournalEntry(entry) + "restore\t/x\ty\n").ok());
}

}  // namespace
}  // namespace blkbench
