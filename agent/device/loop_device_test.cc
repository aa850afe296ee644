// Integration tests on REAL loop devices (root, losetup): device facts, applying and restoring
// queue settings through the real sysfs, crash recovery, and the wrong-disk guard refusing
// mounted, formatted, swap and partitioned devices without writing a single sector.
// Every test skips when loop devices cannot be created; the two that need bfq or
// device-mapper run in a VM guest when the host kernel lacks them (common/testing/in_guest.h).
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>

#include "agent/device/device_facts.h"
#include "agent/device/queue_settings.h"
#include "agent/device/safety.h"
#include "agent/device/testutil.h"
#include "common/testing/in_guest.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace blkbench {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr uint64_t kLoopBytes = 64 << 20;

class LoopTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<testing::LoopDevice>> loop =
        testing::LoopDevice::Attach(kLoopBytes, {.partition_scan = PartitionScan()});
    if (!loop.ok()) GTEST_SKIP() << "no loop device: " << loop.status();
    loop_ = *std::move(loop);
  }

  virtual bool PartitionScan() const { return false; }

  absl::StatusOr<v1::DeviceFacts> Facts() { return ReadDeviceFacts(loop_->path(), "loop"); }

  std::string Queue(const std::string& attr) {
    absl::StatusOr<std::string> value =
        ReadAttribute("/sys/block/" + loop_->name() + "/queue/" + attr);
    EXPECT_TRUE(value.ok()) << value.status();
    return value.ok() ? *value : "";
  }

  std::string CurrentScheduler() { return ParseSchedulers(Queue("scheduler"))->current; }

  // Runs the whole guard on the loop device, allowlisted, and asserts it is refused with
  // `reason` and that the device saw no write at all.
  void ExpectRefused(const std::string& reason) {
    const uint64_t writes_before = loop_->WritesCompleted();
    std::vector<AllowlistEntry> allowlist = {{loop_->path(), "loop"}};
    EXPECT_EQ(*ResolveAllowlisted(allowlist, loop_->path()), loop_->path());
    absl::Status status = CheckSafeToWrite(loop_->path());
    EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition) << status;
    EXPECT_THAT(status.message(), HasSubstr(reason));
    absl::StatusOr<ExclusiveHold> hold = PrepareExclusiveWrite(allowlist, loop_->path());
    EXPECT_EQ(hold.status().code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_THAT(hold.status().message(), HasSubstr(reason));
    EXPECT_EQ(loop_->WritesCompleted(), writes_before);
  }

  testing::TempDir tmp_;
  std::unique_ptr<testing::LoopDevice> loop_;
};

TEST_F(LoopTest, FactsOfALoopDevice) {
  absl::StatusOr<v1::DeviceFacts> facts = Facts();
  ASSERT_TRUE(facts.ok()) << facts.status();
  EXPECT_EQ(facts->path(), loop_->path());
  EXPECT_EQ(facts->device_class(), "loop");
  EXPECT_EQ(facts->kernel_name(), loop_->name());
  EXPECT_TRUE(facts->is_block());
  EXPECT_EQ(facts->size_bytes(), kLoopBytes);
  EXPECT_EQ(facts->logical_block_size(), 512u);
  EXPECT_GE(facts->physical_block_size(), 512u);
  EXPECT_THAT(facts->schedulers(), Contains("none"));
  EXPECT_THAT(facts->schedulers(), Contains("mq-deadline"));
  EXPECT_EQ(facts->queue().scheduler(), CurrentScheduler());
  EXPECT_EQ(std::to_string(facts->queue().nr_requests()), Queue("nr_requests"));
  EXPECT_EQ(std::to_string(facts->queue().max_sectors_kb()), Queue("max_sectors_kb"));

  // Through a by-id style symlink: same device, the caller's path kept.
  testing::Symlink(loop_->path(), tmp_.path() + "/by-id/virtio-blkbench");
  absl::StatusOr<v1::DeviceFacts> linked =
      ReadDeviceFacts(tmp_.path() + "/by-id/virtio-blkbench", "loop");
  ASSERT_TRUE(linked.ok()) << linked.status();
  EXPECT_EQ(linked->kernel_name(), loop_->name());
  EXPECT_EQ(linked->path(), tmp_.path() + "/by-id/virtio-blkbench");
}

// A loop device's queue outlives the detach: the test helper must put back a scheduler
// a test switched by hand, or the next user of /dev/loopN inherits it.
TEST_F(LoopTest, TheHelperPutsBackASchedulerATestSwitched) {
  const std::string name = loop_->name();
  const std::string before = CurrentScheduler();
  const std::string other = loop_->OtherScheduler();
  if (other.empty()) GTEST_SKIP() << "the loop device offers one scheduler only";
  ASSERT_TRUE(WriteAttribute("/sys/block/" + name + "/queue/scheduler", other).ok());
  ASSERT_EQ(CurrentScheduler(), other);
  loop_.reset();
  absl::StatusOr<std::string> after = ReadAttribute("/sys/block/" + name + "/queue/scheduler");
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_EQ(ParseSchedulers(*after)->current, before);
}

TEST_F(LoopTest, ApplyThenRestoreLeavesTheDeviceAsFound) {
  absl::StatusOr<v1::DeviceFacts> facts = Facts();
  ASSERT_TRUE(facts.ok()) << facts.status();
  if (std::find(facts->schedulers().begin(), facts->schedulers().end(), "bfq") ==
      facts->schedulers().end()) {
    if (!testing::InGuest()) return testing::RunInGuest(testing::LoopAndBfqGuest());
    GTEST_SKIP() << "bfq is not available";
  }
  const std::string scheduler = CurrentScheduler();
  const std::string nr_requests = Queue("nr_requests");
  const std::string max_sectors_kb = Queue("max_sectors_kb");
  absl::StatusOr<std::unique_ptr<QueueSettingsJournal>> journal =
      QueueSettingsJournal::Open(tmp_.path() + "/state");
  ASSERT_TRUE(journal.ok()) << journal.status();

  v1::QueueSettings wanted;
  wanted.set_scheduler("bfq");
  wanted.set_nr_requests(32);
  wanted.set_max_sectors_kb(64);
  v1::QueueSettings applied;
  absl::Status status = (*journal)->Apply(*facts, wanted, &applied);
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_EQ(applied.scheduler(), "bfq");
  EXPECT_EQ(applied.nr_requests(), 32u);
  EXPECT_EQ(applied.max_sectors_kb(), 64u);
  EXPECT_EQ(CurrentScheduler(), "bfq");
  EXPECT_EQ(Queue("nr_requests"), "32");
  EXPECT_EQ(Queue("max_sectors_kb"), "64");

  status = (*journal)->Restore(loop_->name());
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_EQ(CurrentScheduler(), scheduler);
  EXPECT_EQ(Queue("nr_requests"), nr_requests);
  EXPECT_EQ(Queue("max_sectors_kb"), max_sectors_kb);
}

TEST_F(LoopTest, ClampedValueIsAnErrorAndEverythingIsRolledBack) {
  absl::StatusOr<v1::DeviceFacts> facts = Facts();
  ASSERT_TRUE(facts.ok()) << facts.status();
  const std::string scheduler = CurrentScheduler();
  const std::string nr_requests = Queue("nr_requests");
  absl::StatusOr<std::unique_ptr<QueueSettingsJournal>> journal =
      QueueSettingsJournal::Open(tmp_.path() + "/state");
  ASSERT_TRUE(journal.ok()) << journal.status();

  // The kernel raises nr_requests below BLKDEV_MIN_RQ (4) silently; the scheduler switch that
  // came first must be undone.
  v1::QueueSettings wanted;
  wanted.set_scheduler(scheduler == "mq-deadline" ? "none" : "mq-deadline");
  wanted.set_nr_requests(1);
  v1::QueueSettings applied;
  absl::Status status = (*journal)->Apply(*facts, wanted, &applied);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_THAT(status.message(), HasSubstr("nr_requests"));
  EXPECT_THAT(status.message(), HasSubstr(loop_->name()));
  EXPECT_EQ(CurrentScheduler(), scheduler);
  EXPECT_EQ(Queue("nr_requests"), nr_requests);
  EXPECT_THAT(*ListDirectory(tmp_.path() + "/state"), ElementsAre(".lock"));

  // Refused outright by the kernel (EINVAL) is the same.
  wanted.set_nr_requests(1u << 30);
  status = (*journal)->Apply(*facts, wanted, &applied);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_EQ(CurrentScheduler(), scheduler);
  EXPECT_EQ(Queue("nr_requests"), nr_requests);

  // And unknown schedulers never reach the kernel.
  wanted.set_scheduler("cfq");
  status = (*journal)->Apply(*facts, wanted, &applied);
  EXPECT_THAT(status.message(), HasSubstr("\"cfq\" is not available"));
}

TEST_F(LoopTest, CrashedAgentsSettingsAreRestoredAtTheNextStart) {
  absl::StatusOr<v1::DeviceFacts> facts = Facts();
  ASSERT_TRUE(facts.ok()) << facts.status();
  const std::string scheduler = CurrentScheduler();
  const std::string nr_requests = Queue("nr_requests");
  const std::string max_sectors_kb = Queue("max_sectors_kb");
  const std::string other = scheduler == "mq-deadline" ? "kyber" : "mq-deadline";
  const std::string state = tmp_.path() + "/state";

  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // The "agent": applies settings, then dies without restoring anything.
    absl::StatusOr<std::unique_ptr<QueueSettingsJournal>> journal =
        QueueSettingsJournal::Open(state);
    if (!journal.ok()) _exit(2);
    v1::QueueSettings wanted;
    wanted.set_scheduler(other);
    wanted.set_nr_requests(16);
    wanted.set_max_sectors_kb(32);
    v1::QueueSettings applied;
    _exit((*journal)->Apply(*facts, wanted, &applied).ok() ? 0 : 3);
  }
  int wstatus = 0;
  ASSERT_EQ(waitpid(child, &wstatus, 0), child);
  ASSERT_TRUE(WIFEXITED(wstatus));
  ASSERT_EQ(WEXITSTATUS(wstatus), 0);
  EXPECT_EQ(CurrentScheduler(), other);
  EXPECT_EQ(Queue("nr_requests"), "16");
  EXPECT_EQ(Queue("max_sectors_kb"), "32");

  absl::StatusOr<std::unique_ptr<QueueSettingsJournal>> journal = QueueSettingsJournal::Open(state);
  ASSERT_TRUE(journal.ok()) << journal.status();
  absl::StatusOr<RecoveryReport> report = (*journal)->RecoverAll();
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_TRUE(report->ok()) << report->failed[0];
  EXPECT_THAT(report->restored, ElementsAre("queue-" + loop_->name()));
  EXPECT_EQ(CurrentScheduler(), scheduler);
  EXPECT_EQ(Queue("nr_requests"), nr_requests);
  EXPECT_EQ(Queue("max_sectors_kb"), max_sectors_kb);
}

TEST_F(LoopTest, CleanAllowlistedDeviceIsAcceptedThroughABySymlinkAndHeldExclusively) {
  testing::Symlink(loop_->path(), tmp_.path() + "/by-id/wwn-0xblkbench");
  std::vector<AllowlistEntry> allowlist = {{tmp_.path() + "/by-id/wwn-0xblkbench", "loop"}};
  const uint64_t writes_before = loop_->WritesCompleted();
  absl::StatusOr<ExclusiveHold> hold = PrepareExclusiveWrite(allowlist, allowlist[0].path);
  ASSERT_TRUE(hold.ok()) << hold.status();
  EXPECT_EQ(hold->path(), loop_->path());
  // While held, nobody else gets it exclusively (mount, swapon, dm, a second run).
  absl::Status second = HoldExclusive(loop_->path()).status();
  EXPECT_EQ(second.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(second.message(), HasSubstr(loop_->path() + " is busy"));
  EXPECT_EQ(loop_->WritesCompleted(), writes_before);
}

TEST_F(LoopTest, NotAllowlistedDeviceAndSymlinksToItAreRefused) {
  absl::StatusOr<std::unique_ptr<testing::LoopDevice>> other =
      testing::LoopDevice::Attach(kLoopBytes);
  if (!other.ok()) GTEST_SKIP() << other.status();
  std::vector<AllowlistEntry> allowlist = {{loop_->path(), "loop"}};
  const uint64_t writes_before = (*other)->WritesCompleted();

  absl::Status status = ResolveAllowlisted(allowlist, (*other)->path()).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(status.message(), HasSubstr((*other)->path()));

  const std::string link = tmp_.path() + "/by-id/looks-innocent";
  testing::Symlink((*other)->path(), link);
  status = PrepareExclusiveWrite(allowlist, link).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(status.message(), HasSubstr(link));
  EXPECT_THAT(status.message(), HasSubstr((*other)->path()));
  EXPECT_EQ((*other)->WritesCompleted(), writes_before);
}

class FormattedLoopTest : public LoopTest {
 protected:
  void SetUp() override {
    LoopTest::SetUp();
    if (IsSkipped()) return;
    if (!testing::HaveCommand("mkfs.ext4")) GTEST_SKIP() << "mkfs.ext4 (e2fsprogs) missing";
    // No lazy init: a mounted ext4 must not write in the background during the test.
    testing::CommandResult mkfs = testing::Run(
        {"mkfs.ext4", "-q", "-F", "-E", "lazy_itable_init=0,lazy_journal_init=0", loop_->path()});
    ASSERT_EQ(mkfs.exit_code, 0) << mkfs.output;
  }
};

TEST_F(FormattedLoopTest, UnmountedFilesystemSignatureIsRefused) {
  ExpectRefused(loop_->path() +
                " carries an ext4 filesystem (libblkid: TYPE=ext4, USAGE=filesystem, magic at byte "
                "1080)");
}

TEST_F(FormattedLoopTest, MountedFilesystemIsRefused) {
  const std::string mount_point = tmp_.path() + "/mnt";
  auto unmount = testing::MountExt4ReadOnly(loop_->path(), mount_point, /*format=*/false);
  ASSERT_TRUE(unmount.ok()) << unmount.status();
  ExpectRefused(loop_->path() + " is mounted at " + mount_point);
  // The kernel agrees: an exclusive open fails while mounted.
  EXPECT_EQ(HoldExclusive(loop_->path()).status().code(), absl::StatusCode::kFailedPrecondition);
}

TEST_F(LoopTest, ActiveSwapIsRefused) {
  if (!testing::HaveCommand("mkswap") || !testing::HaveCommand("swapon")) {
    GTEST_SKIP() << "mkswap/swapon (util-linux) missing";
  }
  testing::CommandResult mkswap = testing::Run({"mkswap", loop_->path()});
  ASSERT_EQ(mkswap.exit_code, 0) << mkswap.output;
  testing::CommandResult swapon = testing::Run({"swapon", loop_->path()});
  if (swapon.exit_code != 0) GTEST_SKIP() << "swapon not permitted here: " << swapon.output;
  testing::SwapGuard swapoff(loop_->path());
  ExpectRefused(loop_->path() + " is active swap");
}

class PartitionedLoopTest : public LoopTest {
 protected:
  bool PartitionScan() const override { return true; }
};

TEST_F(PartitionedLoopTest, PartitionedDeviceIsRefused) {
  if (!testing::HaveCommand("sfdisk")) GTEST_SKIP() << "sfdisk (fdisk package) missing";
  const std::string table = tmp_.path() + "/table";
  testing::WriteFile(table, "label: gpt\n,16M\n,\n");
  testing::CommandResult sfdisk =
      testing::Run({"sh", "-c", "sfdisk -q '" + loop_->path() + "' < '" + table + "'"});
  ASSERT_EQ(sfdisk.exit_code, 0) << sfdisk.output;
  // The partitions appear once the kernel has rescanned the table. A kernel built without
  // the msdos/efi parsers ignores the rescan; partx then adds them with BLKPG instead.
  const std::string part = "/sys/block/" + loop_->name() + "/" + loop_->name() + "p1";
  for (int i = 0; i < 10 && !PathExists(part); ++i) usleep(100 * 1000);
  if (!PathExists(part) && testing::HaveCommand("partx")) {
    testing::Run({"partx", "-a", loop_->path()});
  }
  for (int i = 0; i < 50 && !PathExists(part); ++i) usleep(100 * 1000);
  ASSERT_TRUE(PathExists(part)) << "no partitions appeared for " << loop_->path();
  ExpectRefused(loop_->path() + " has partitions (" + loop_->name() + "p1, " + loop_->name() +
                "p2)");
  ExpectRefused(loop_->path() + " carries a GPT partition table");
}

TEST_F(LoopTest, DeviceMapperHolderIsRefused) {
  if (!testing::HaveCommand("dmsetup")) GTEST_SKIP() << "dmsetup missing";
  const std::string name = "blkbench-test-" + std::to_string(getpid());
  const std::string table =
      "0 " + std::to_string(kLoopBytes / 512) + " linear " + loop_->path() + " 0";
  testing::CommandResult create = testing::Run({"dmsetup", "create", name, "--table", table});
  if (create.exit_code != 0) {
    if (!testing::InGuest()) return testing::RunInGuest(testing::DeviceMapperGuest());
    GTEST_SKIP() << "device-mapper unavailable: " << create.output;
  }
  struct Remove {
    std::string name;
    ~Remove() { testing::Run({"dmsetup", "remove", name}); }
  } remove{name};
  ExpectRefused(loop_->path() + " is held by dm-");
}

}  // namespace
}  // namespace blkbench
