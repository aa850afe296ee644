// Tests for null_blk.h. configfs cannot be mounted on this machine, so FakeNullBlkKernel
// (fake_null_blk.h) stands in for drivers/block/null_blk's configfs side on a plain
// directory tree: mkdir of an item creates its attribute files, a write to an unknown
// attribute is ENOENT, a write to a powered device is EBUSY, power=1 checks the attributes
// (EINVAL) and adds <dev>/nullb<index>, rmdir drops the device. The last test runs on the real
// kernel where /sys/kernel/config/nullb exists and is skipped here, saying why.
#include "agent/device/null_blk.h"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "agent/device/fake_null_blk.h"
#include "agent/device/testutil.h"
#include "common/testing/command.h"
#include "common/testing/in_guest.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace blkbench {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

using testing::FakeNullBlkKernel;

// Seed 000's device.
const std::map<std::string, std::string> kSeed000 = {
    {"completion_nsec", "0"}, {"blocksize", "512"},     {"home_node", "0"},
    {"irqmode", "0"},         {"submit_queues", "128"}, {"hw_queue_depth", "1024"},
    {"size", "1024"},         {"memory_backed", "0"},   {"queue_mode", "2"}};

class NullBlkTest : public ::testing::Test {
 protected:
  void SetUp() override {
    SystemPaths sys = testing::FakePaths(tmp_.path());
    testing::WriteFile(sys.procfs + "/sys/kernel/random/boot_id", "boot-1\n");
    paths_.configfs = tmp_.path() + "/sys/kernel/config";
    paths_.dev = tmp_.path() + "/dev";
    kernel_ = std::make_unique<FakeNullBlkKernel>(paths_);
    journal_ = OpenJournal(sys);
  }
  std::unique_ptr<SettingsJournal> OpenJournal(const SystemPaths& sys) {
    auto j = SettingsJournal::Open(tmp_.path() + "/state", {tmp_.path() + "/sys"}, sys,
                                   [this](const std::string& p) { return kernel_->Rmdir(p); });
    EXPECT_TRUE(j.ok()) << j.status();
    return j.ok() ? std::move(*j) : nullptr;
  }
  NullBlkProvisioner Provisioner() {
    return NullBlkProvisioner(paths_, *journal_, *kernel_, absl::Milliseconds(50));
  }
  std::vector<std::string> Items() const {
    std::vector<std::string> out;
    for (const auto& e : std::filesystem::directory_iterator(paths_.nullb())) {
      out.push_back(e.path().filename());
    }
    return out;
  }
  std::vector<std::string> Nodes() const {
    std::vector<std::string> out;
    for (const auto& e : std::filesystem::directory_iterator(paths_.dev)) {
      out.push_back(e.path().filename());
    }
    return out;
  }

  testing::TempDir tmp_{"null_blk_test"};
  NullBlkPaths paths_;
  std::unique_ptr<FakeNullBlkKernel> kernel_;
  std::unique_ptr<SettingsJournal> journal_;
};

TEST_F(NullBlkTest, Seed000DeviceIsWrittenInOrderPoweredOnAndRemoved) {
  NullBlkProvisioner p = Provisioner();
  absl::StatusOr<NullBlkDevice> dev = p.Create("blkbench-run-7", kSeed000);
  ASSERT_TRUE(dev.ok()) << dev.status();
  EXPECT_EQ(dev->dev_path, paths_.dev + "/nullb0");
  EXPECT_THAT(kernel_->writes,
              ElementsAre("completion_nsec=0", "blocksize=512", "home_node=0", "irqmode=0",
                          "submit_queues=128", "hw_queue_depth=1024", "size=1024",
                          "memory_backed=0", "queue_mode=2", "power=1"));
  EXPECT_THAT(Nodes(), ElementsAre("nullb0"));
  EXPECT_TRUE(journal_->Contains(NullBlkJournalEntry("blkbench-run-7")));
  ASSERT_TRUE(p.Remove(*dev).ok());
  // Left as found: no item, no node, no journal entry.
  EXPECT_THAT(Items(), IsEmpty());
  EXPECT_THAT(Nodes(), IsEmpty());
  EXPECT_FALSE(journal_->Contains(NullBlkJournalEntry("blkbench-run-7")));
  EXPECT_EQ(kernel_->writes.back(), "power=1");  // the journal powered off by plain write
}

// A crash after power-on (the agent killed mid-run): the next agent's RecoverAll removes
// the device the journal recorded before the first mkdir.
TEST_F(NullBlkTest, RecoverAllRemovesADeviceLeftByACrash) {
  {
    NullBlkProvisioner p = Provisioner();
    ASSERT_TRUE(p.Create("left", kSeed000).ok());
  }  // no Remove: as if the agent died here
  ASSERT_THAT(Items(), ElementsAre("left"));
  journal_.reset();  // the lock goes with the process
  journal_ = OpenJournal(testing::FakePaths(tmp_.path()));
  absl::StatusOr<RecoveryReport> report = journal_->RecoverAll();
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_THAT(report->restored, ElementsAre("nullb-left"));
  EXPECT_THAT(Items(), IsEmpty());
  EXPECT_THAT(Nodes(), IsEmpty());
}

// A crash between the journal write and the mkdir leaves an entry whose item never
// existed: recovery skips it and drops the entry.
TEST_F(NullBlkTest, AnEntryWhoseItemWasNeverMadeIsDropped) {
  JournalEntry e;
  e.name = NullBlkJournalEntry("never");
  e.configfs_items.push_back({paths_.nullb() + "/never", paths_.nullb() + "/never/power"});
  ASSERT_TRUE(journal_->Record(e).ok());
  auto report = journal_->RecoverAll();
  ASSERT_TRUE(report.ok());
  EXPECT_THAT(report->restored, ElementsAre("nullb-never"));
  EXPECT_EQ(kernel_->rmdirs, 0);
}

TEST_F(NullBlkTest, ARefusedAttributeUndoesEverything) {
  kernel_->fail_write = 5;  // submit_queues=128
  NullBlkProvisioner p = Provisioner();
  absl::StatusOr<NullBlkDevice> dev = p.Create("bad", kSeed000);
  ASSERT_FALSE(dev.ok());
  EXPECT_THAT(dev.status().message(), HasSubstr("echo 128 > " + paths_.nullb() +
                                                "/bad/submit_queues (the kernel refused it)"));
  EXPECT_THAT(Items(), IsEmpty());
  EXPECT_FALSE(journal_->Contains(NullBlkJournalEntry("bad")));
}

TEST_F(NullBlkTest, APowerOnTheKernelRefusesUndoesEverything) {
  NullBlkProvisioner p = Provisioner();
  absl::StatusOr<NullBlkDevice> dev = p.Create("zero", {{"hw_queue_depth", "0"}});
  ASSERT_FALSE(dev.ok());
  EXPECT_THAT(dev.status().message(), HasSubstr("echo 1 > " + paths_.nullb() + "/zero/power"));
  EXPECT_THAT(Items(), IsEmpty());
  EXPECT_THAT(Nodes(), IsEmpty());
}

TEST_F(NullBlkTest, ANodeThatNeverAppearsTimesOutAndIsUndone) {
  kernel_->make_nodes = false;
  NullBlkProvisioner p = Provisioner();
  absl::StatusOr<NullBlkDevice> dev = p.Create("slow", kSeed000);
  ASSERT_FALSE(dev.ok());
  EXPECT_TRUE(absl::IsDeadlineExceeded(dev.status())) << dev.status();
  EXPECT_THAT(dev.status().message(), HasSubstr("/nullb0 appeared within 50ms"));
  EXPECT_THAT(Items(), IsEmpty());
}

// Nothing is touched for a parameter that is not null_blk's or an item name mkdir would
// misread: the matrix cannot make the agent write arbitrary configfs files.
TEST_F(NullBlkTest, ForeignAttributesAndNamesAreRefusedBeforeAnyWrite) {
  NullBlkProvisioner p = Provisioner();
  for (const char* attr : {"power", "index", "../../kernel/x", "nr_devices"}) {
    absl::StatusOr<NullBlkDevice> dev = p.Create("x", {{attr, "1"}});
    ASSERT_FALSE(dev.ok()) << attr;
    EXPECT_THAT(dev.status().message(), HasSubstr("is not a null_blk attribute")) << attr;
  }
  EXPECT_FALSE(p.Create("../escape", {}).ok());
  EXPECT_FALSE(p.Create("two\nlines", {}).ok());
  EXPECT_FALSE(p.Create("x", {{"size", "1\n2"}}).ok());
  EXPECT_TRUE(kernel_->writes.empty());
  EXPECT_THAT(Items(), IsEmpty());
}

TEST_F(NullBlkTest, AvailableSaysWhatIsMissing) {
  std::filesystem::remove_all(paths_.nullb());
  NullBlkProvisioner p = Provisioner();
  absl::Status s = p.Available();
  EXPECT_TRUE(absl::IsFailedPrecondition(s));
  EXPECT_THAT(s.message(), HasSubstr("modprobe null_blk nr_devices=0"));
  EXPECT_FALSE(p.Create("x", {}).ok());
}

TEST_F(NullBlkTest, TwoDevicesAtOnceGetTheirOwnNodes) {
  NullBlkProvisioner p = Provisioner();
  auto a = p.Create("a", {});
  auto b = p.Create("b", {});
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_NE(a->dev_path, b->dev_path);
  EXPECT_TRUE(absl::IsAlreadyExists(p.Create("a", {}).status()));
  ASSERT_TRUE(p.Remove(*a).ok());
  ASSERT_TRUE(p.Remove(*b).ok());
  EXPECT_THAT(Items(), IsEmpty());
}

// The real kernel: the host's where the module is loaded, else a VM guest's.
TEST(NullBlkRealTest, CreatesAndRemovesARealDevice) {
  NullBlkPaths paths;
  struct stat st;
  if (getuid() != 0) GTEST_SKIP() << "needs root";
  if (stat(paths.nullb().c_str(), &st) != 0) {
    if (!testing::InGuest()) return testing::RunInGuest(testing::NullBlkGuest());
    GTEST_SKIP() << paths.nullb()
                 << " is absent (no configfs or null_blk module here); the fake kernel tests "
                    "cover provisioning";
  }
  testing::TempDir tmp("null_blk_real");
  auto journal = SettingsJournal::Open(tmp.path() + "/state", {"/sys"});
  ASSERT_TRUE(journal.ok()) << journal.status();
  std::unique_ptr<ConfigfsOps> ops = RealConfigfs();
  NullBlkProvisioner p(paths, **journal, *ops);
  auto dev = p.Create(absl::StrCat("blkbench-test-", getpid()),
                      {{"size", "64"}, {"memory_backed", "0"}, {"queue_mode", "2"}});
  ASSERT_TRUE(dev.ok()) << dev.status();
  EXPECT_TRUE(ops->IsBlockDevice(dev->dev_path));
  ASSERT_TRUE(p.Remove(*dev).ok());
  EXPECT_NE(stat(dev->item.c_str(), &st), 0);
}

}  // namespace
}  // namespace blkbench
