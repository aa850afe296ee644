// VM test hosts for real: Debian kernels (resolved by pattern, fetched into
// $HOME/.cache/blkbench-kernels) booted in qemu with NVMe, SCSI-HDD and virtio disks;
// null_blk through configfs, fio, timeouts, a guest that fails at boot and one that goes
// silent. Needs root, qemu and the Debian mirrors (or a warm cache); skipped only when
// qemu is absent. ctest label: vm.
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <iostream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "common/vm/files.h"
#include "common/vm/guest.h"
#include "common/vm/initramfs.h"
#include "common/vm/kernel.h"
#include "common/vm/process.h"
#include "common/vm/qemu.h"
#include "common/vm/vm_host.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace blkbench::vm {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;

// TCG on a shared 2-core CI machine: a boot takes 10–25 s; these bound a hang, not speed.
constexpr absl::Duration kBootTimeout = absl::Minutes(3);
constexpr absl::Duration kCommandTimeout = absl::Seconds(60);

class VmTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (absl::StatusOr<std::string> v = QemuVersion("qemu-system-x86_64"); !v.ok()) {
      GTEST_SKIP() << "qemu is absent: " << v.status().message();
    }
    absl::StatusOr<std::string> parent = MakeTempDir("/tmp", "vm_test-");
    ASSERT_TRUE(parent.ok()) << parent.status();
    work_parent_ = *parent;
  }
  void TearDown() override {
    if (!work_parent_.empty()) {
      EXPECT_EQ(rmdir(work_parent_.c_str()), 0) << "a VM left files in " << work_parent_;
    }
  }

  // A config for the newest kernel matching `pattern` with its initramfs.
  VmConfig ConfigFor(const std::string& pattern) {
    VmHostSpec spec;
    spec.kernel = "deb:" + pattern;
    spec.work_parent = work_parent_;
    absl::StatusOr<VmConfig> c = PrepareVm(spec);
    EXPECT_TRUE(c.ok()) << c.status();
    return c.value_or(VmConfig{});
  }

  static std::string Out(const absl::StatusOr<GuestRunResult>& r) {
    return r.ok() ? std::string(absl::StripTrailingAsciiWhitespace(r->stdout_data)) : "";
  }

  // Runs and expects exit 0; returns stdout without the trailing newline.
  static std::string MustRun(Guest& g, const std::vector<std::string>& argv) {
    absl::StatusOr<GuestRunResult> r = g.Run(argv, kCommandTimeout);
    EXPECT_TRUE(r.ok()) << r.status();
    if (r.ok()) {
      EXPECT_EQ(r->exit_code, 0) << argv[0] << ": " << r->output;
    }
    return Out(r);
  }

  static void ExpectGone(pid_t qemu, const std::string& dir) {
    EXPECT_EQ(kill(qemu, 0), -1) << "qemu " << qemu << " still exists";
    EXPECT_FALSE(PathExists(dir)) << dir;
  }

  static void Report(const char* what, const Guest& g) {
    const VmFacts& f = g.facts();
    std::cout << "[vm] " << what << ": release=" << f.release << " accel=" << f.accel
              << " qemu=" << f.qemu_version << " vcpus=" << f.vcpus << " memory_mb=" << f.memory_mb
              << " boot=" << absl::FormatDuration(f.boot_time) << "\n";
  }

  std::string work_parent_;
};

// One boot shared by every check (each TCG boot costs 10–25 s).
TEST_F(VmTest, Debian612WithNvmeHddVirtioNullBlkFioAndTimeouts) {
  VmConfig c = ConfigFor("linux-image-6.12*");
  ASSERT_FALSE(c.initramfs.empty());
  c.disks = {{VmDisk::Kind::kNvme, uint64_t{1} << 30, "bbnvme0", 2},
             {VmDisk::Kind::kHdd, uint64_t{1} << 30, "bbhdd0", 0},
             {VmDisk::Kind::kVirtio, uint64_t{1} << 30, "", 2}};
  absl::StatusOr<std::unique_ptr<Guest>> booted = Guest::Boot(c, kBootTimeout);
  ASSERT_TRUE(booted.ok()) << booted.status();
  Guest& g = **booted;
  Report("6.12", g);
  EXPECT_EQ(g.release(), c.kernel.release);
  EXPECT_EQ(g.facts().accel, PathExists("/dev/kvm") ? g.facts().accel : "tcg");
  EXPECT_EQ(MustRun(g, {"uname", "-r"}), c.kernel.release);
  EXPECT_THAT(g.block_devices(), Contains("nvme0n1"));
  EXPECT_THAT(g.block_devices(), Contains("sda"));
  EXPECT_THAT(g.block_devices(), Contains("vda"));
  EXPECT_EQ(MustRun(g, {"cat", "/sys/block/nvme0n1/queue/rotational"}), "0");
  EXPECT_EQ(MustRun(g, {"cat", "/sys/block/sda/queue/rotational"}), "1");
  EXPECT_EQ(MustRun(g, {"cat", "/sys/block/nvme0n1/device/serial"}), "bbnvme0");

  // null_blk through configfs, as the agent's tests will make it.
  MustRun(g, {"modprobe", "null_blk", "nr_devices=0"});
  const std::string nullb = "/sys/kernel/config/nullb/nullb0";
  MustRun(g, {"mkdir", nullb});
  for (const auto& [attr, value] :
       std::vector<std::pair<std::string, std::string>>{{"submit_queues", "2"},
                                                        {"queue_mode", "2"},
                                                        {"hw_queue_depth", "64"},
                                                        {"blocksize", "4096"},
                                                        {"size", "1024"},
                                                        {"power", "1"}}) {
    GuestRunRequest w;
    w.argv = {"sh", "-c", "echo \"$1\" > \"$2\"", "sh", value, absl::StrCat(nullb, "/", attr)};
    absl::StatusOr<GuestRunResult> r = g.Run(w);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->exit_code, 0) << attr << ": " << r->output;
  }
  MustRun(g, {"test", "-e", "/sys/block/nullb0"});
  MustRun(g, {"modprobe", "bfq"});
  EXPECT_THAT(MustRun(g, {"cat", "/sys/block/nullb0/queue/scheduler"}), HasSubstr("bfq"));

  // The host's fio on the guest's nullb0.
  absl::StatusOr<GuestRunResult> fio =
      g.Run({"fio", "--name=vm", "--filename=/dev/nullb0", "--rw=randread", "--bs=4k", "--direct=1",
             "--ioengine=io_uring", "--iodepth=16", "--runtime=2", "--time_based",
             "--output-format=json"},
            kCommandTimeout);
  ASSERT_TRUE(fio.ok()) << fio.status();
  ASSERT_EQ(fio->exit_code, 0) << fio->output;
  size_t read = fio->stdout_data.find("\"read\" :");
  size_t iops_at = fio->stdout_data.find("\"iops\" : ", read);
  ASSERT_NE(iops_at, std::string::npos) << fio->stdout_data;
  std::string iops_text = fio->stdout_data.substr(iops_at + 9, 32);
  iops_text = iops_text.substr(0, iops_text.find_first_of(",\n"));
  double iops = 0;
  ASSERT_TRUE(absl::SimpleAtod(iops_text, &iops)) << iops_text;
  std::cout << "[vm] fio randread 4k on guest nullb0 under " << g.facts().accel << ": " << iops
            << " IOPS\n";
  EXPECT_GT(iops, 0);

  // A command that outlives its timeout is killed by the guest; the VM stays usable.
  const absl::Time start = MonotonicNow();
  absl::StatusOr<GuestRunResult> slow = g.Run({"sleep", "1000"}, absl::Seconds(3));
  const absl::Duration took = MonotonicNow() - start;
  EXPECT_TRUE(absl::IsDeadlineExceeded(slow.status())) << slow.status();
  EXPECT_GE(took, absl::Seconds(3));
  EXPECT_LT(took, absl::Seconds(3) + c.run_grace);
  EXPECT_TRUE(g.alive());
  EXPECT_EQ(MustRun(g, {"echo", "still here"}), "still here");
  absl::StatusOr<GuestRunResult> missing = g.Run({"/nonexistent-cmd"}, kCommandTimeout);
  EXPECT_THAT(missing.status().message(), HasSubstr("/nonexistent-cmd"));
  absl::StatusOr<GuestRunResult> exit3 = g.Run({"sh", "-c", "exit 3"}, kCommandTimeout);
  ASSERT_TRUE(exit3.ok()) << exit3.status();
  EXPECT_EQ(exit3->exit_code, 3);

  const pid_t qemu = g.qemu_pid();
  const std::string dir = g.dir();
  EXPECT_TRUE(g.Shutdown().ok());
  ExpectGone(qemu, dir);
}

TEST_F(VmTest, BadGuestProgramFailsBootQuicklyWithConsoleTail) {
  VmConfig c = ConfigFor("linux-image-6.12*");
  ASSERT_FALSE(c.initramfs.empty());
  c.guest_program = "/nonexistent/blkbench-vm-guest";
  const absl::Time start = MonotonicNow();
  absl::StatusOr<std::unique_ptr<Guest>> g = Guest::Boot(c, kBootTimeout);
  const absl::Duration took = MonotonicNow() - start;
  ASSERT_FALSE(g.ok());
  std::cout << "[vm] failed boot reported after " << absl::FormatDuration(took) << ":\n"
            << g.status().message() << "\n";
  EXPECT_TRUE(absl::IsUnavailable(g.status())) << g.status();
  EXPECT_LT(took, kBootTimeout / 2);  // qemu exits when init fails: no waiting for a timeout
  EXPECT_THAT(g.status().message(), HasSubstr("console tail"));
  EXPECT_THAT(g.status().message(), HasSubstr("blkbench-init: FAILED: guest program"));
  EXPECT_THAT(g.status().message(), HasSubstr("/nonexistent/blkbench-vm-guest"));
}

TEST_F(VmTest, GuestThatNeverSaysHelloFailsAtTheBootTimeout) {
  VmConfig c = ConfigFor("linux-image-6.12*");
  ASSERT_FALSE(c.initramfs.empty());
  // The guest program is one that never says hello: a script on the host (the guest's
  // root is the host's, read-only; not in /tmp, a tmpfs of the guest's own) that sleeps.
  char cwd[4096];
  ASSERT_NE(getcwd(cwd, sizeof cwd), nullptr);
  absl::StatusOr<std::string> dir = MakeTempDir(cwd, "vm_test_silent-");
  ASSERT_TRUE(dir.ok()) << dir.status();
  const std::string script = *dir + "/silent-guest";
  ASSERT_TRUE(WriteFileAtomic(script, "#!/bin/sh\nexec sleep 3600\n", 0755).ok());
  c.guest_program = script;
  c.accel = Accel::kTcg;  // the bound below is the boot's, not a KVM fallback's
  const absl::Duration boot_timeout = absl::Seconds(20);
  const absl::Time start = MonotonicNow();
  absl::StatusOr<std::unique_ptr<Guest>> g = Guest::Boot(c, boot_timeout);
  const absl::Duration took = MonotonicNow() - start;
  ASSERT_FALSE(g.ok());
  EXPECT_TRUE(absl::IsDeadlineExceeded(g.status())) << g.status();
  EXPECT_GE(took, boot_timeout);
  EXPECT_LT(took, boot_timeout + absl::Seconds(5));
  const std::string message(g.status().message());
  EXPECT_THAT(message, HasSubstr("did not say hello within 20s"));
  EXPECT_THAT(message, HasSubstr("blkbench-init: starting"));  // the console tail
  EXPECT_EQ(unlink(script.c_str()), 0);
  EXPECT_EQ(rmdir(dir->c_str()), 0);
}

TEST_F(VmTest, Debian61BootsAndASilentGuestIsKilled) {
  VmConfig c = ConfigFor("linux-image-6.1.0-*");
  ASSERT_FALSE(c.initramfs.empty());
  c.run_grace = absl::Seconds(3);
  absl::StatusOr<std::unique_ptr<Guest>> booted = Guest::Boot(c, kBootTimeout);
  ASSERT_TRUE(booted.ok()) << booted.status();
  Guest& g = **booted;
  Report("6.1", g);
  EXPECT_EQ(g.release(), c.kernel.release);
  EXPECT_EQ(MustRun(g, {"uname", "-r"}), c.kernel.release);
  MustRun(g, {"modprobe", "null_blk"});  // modules from the 6.1 package, not the host's

  // Stop the guest program itself: its command ends, but nothing reports it.
  const pid_t qemu = g.qemu_pid();
  const std::string dir = g.dir();
  const absl::Time start = MonotonicNow();
  absl::StatusOr<GuestRunResult> r = g.Run({"sh", "-c", "kill -STOP $PPID"}, absl::Seconds(2));
  const absl::Duration took = MonotonicNow() - start;
  EXPECT_TRUE(absl::IsDeadlineExceeded(r.status())) << r.status();
  EXPECT_THAT(r.status().message(), HasSubstr("silent"));
  EXPECT_THAT(r.status().message(), HasSubstr("console tail"));
  EXPECT_LT(took, absl::Seconds(2) + c.run_grace + absl::Seconds(2));
  EXPECT_FALSE(g.alive());
  EXPECT_EQ(kill(qemu, 0), -1) << "qemu still running after the guest went silent";
  EXPECT_TRUE(absl::IsFailedPrecondition(g.Run({"true"}, kCommandTimeout).status()));
  EXPECT_TRUE(g.Shutdown().ok());
  ExpectGone(qemu, dir);
}

}  // namespace
}  // namespace blkbench::vm
