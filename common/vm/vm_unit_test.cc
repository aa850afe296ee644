// Unit tests of common/vm that need no qemu, network or root: spec parsing, package
// choice, module order, cpio bytes, qemu's command line, processes and the channel.
#include <poll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>

#include "absl/strings/str_join.h"
#include "blkbench/v1/vm.pb.h"
#include "common/vm/boot_modules.h"
#include "common/vm/channel.h"
#include "common/vm/cpio.h"
#include "common/vm/files.h"
#include "common/vm/guest_agent.h"
#include "common/vm/kernel.h"
#include "common/vm/process.h"
#include "common/vm/qemu.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace blkbench::vm {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(KernelSpecTest, ParsesDebianAndLocalSpecs) {
  absl::StatusOr<KernelSpec> deb = ParseKernelSpec("deb:6.12*");
  ASSERT_TRUE(deb.ok()) << deb.status();
  EXPECT_EQ(deb->kind, KernelSpec::Kind::kDebian);
  EXPECT_EQ(deb->deb_pattern, "linux-image-6.12*");
  EXPECT_EQ(ParseKernelSpec("deb:linux-image-6.1.0-*")->deb_pattern, "linux-image-6.1.0-*");

  absl::StatusOr<KernelSpec> local = ParseKernelSpec("/k/arch/x86/boot/bzImage:/k/mods");
  ASSERT_TRUE(local.ok()) << local.status();
  EXPECT_EQ(local->kind, KernelSpec::Kind::kLocal);
  EXPECT_EQ(local->image, "/k/arch/x86/boot/bzImage");
  EXPECT_EQ(local->modules_root, "/k/mods");
  EXPECT_EQ(ParseKernelSpec("/k/bzImage")->modules_root, "");

  for (const char* bad : {"", "deb:", "deb:a b", "/k/bzImage:", ":/mods"}) {
    absl::StatusOr<KernelSpec> s = ParseKernelSpec(bad);
    EXPECT_TRUE(absl::IsInvalidArgument(s.status())) << bad;
  }
  EXPECT_THAT(ParseKernelSpec("deb:").status().message(), HasSubstr("'deb:'"));
}

TEST(KernelSpecTest, DebianVersionOrder) {
  EXPECT_LT(CompareDebianVersions("6.12.9+deb12", "6.12.10+deb12"), 0);
  EXPECT_GT(CompareDebianVersions("6.1.0-57", "6.1.0-9"), 0);
  EXPECT_LT(CompareDebianVersions("1.0~rc1", "1.0"), 0);
  EXPECT_EQ(CompareDebianVersions("6.1.0-007", "6.1.0-7"), 0);
  EXPECT_LT(CompareDebianVersions("6.12", "6.12.1"), 0);
}

TEST(KernelSpecTest, PicksNewestGenericImage) {
  const std::vector<std::string> names = {"linux-image-6.12-amd64",
                                          "linux-image-6.12-amd64-dbg",
                                          "linux-image-6.12.9+deb12-amd64",
                                          "linux-image-6.12.118+deb12-amd64",
                                          "linux-image-6.12.118+deb12-amd64-unsigned",
                                          "linux-image-6.12.118+deb12-amd64-dbg",
                                          "linux-image-6.12.118+deb12-cloud-amd64",
                                          "linux-image-6.12.118+deb12-rt-amd64",
                                          "linux-image-6.12.100+deb12-amd64",
                                          "linux-image-6.1.0-57-amd64",
                                          "linux-image-6.1.0-9-amd64",
                                          "linux-image-amd64",
                                          "linux-image-6.12-amd64-signed-template"};
  EXPECT_THAT(DebianImageCandidates("linux-image-6.12*", names),
              ElementsAre("linux-image-6.12.118+deb12-amd64", "linux-image-6.12.100+deb12-amd64",
                          "linux-image-6.12.9+deb12-amd64"));
  EXPECT_THAT(DebianImageCandidates("linux-image-6.1.0-*", names),
              ElementsAre("linux-image-6.1.0-57-amd64", "linux-image-6.1.0-9-amd64"));
  EXPECT_THAT(DebianImageCandidates("linux-image-6.12*cloud*", names),
              ElementsAre("linux-image-6.12.118+deb12-cloud-amd64"));
  EXPECT_THAT(DebianImageCandidates("linux-image-6.1.0-9-amd64", names),
              ElementsAre("linux-image-6.1.0-9-amd64"));
  EXPECT_TRUE(DebianImageCandidates("linux-image-5.10*", names).empty());
}

TEST(KernelSpecTest, ReadsBzImageRelease) {
  char dir_tmpl[] = "/tmp/vm_unit_XXXXXX";
  ASSERT_NE(mkdtemp(dir_tmpl), nullptr);
  const std::string path = std::string(dir_tmpl) + "/bzImage";
  std::string image(0x600, '\0');
  image.replace(0x202, 4, "HdrS");
  image[0x20e] = 0x00;  // version string at 0x200 + 0x300
  image[0x20f] = 0x03;
  image.replace(0x500, 30, "6.13.0-rc1+ (me@box) #1 SMP x");
  ASSERT_TRUE(WriteFileAtomic(path, image).ok());
  absl::StatusOr<std::string> release = BzImageRelease(path);
  ASSERT_TRUE(release.ok()) << release.status();
  EXPECT_EQ(*release, "6.13.0-rc1+");
  ASSERT_TRUE(WriteFileAtomic(path, std::string(0x600, 'x')).ok());
  EXPECT_TRUE(absl::IsInvalidArgument(BzImageRelease(path).status()));
  EXPECT_TRUE(RemoveTree(dir_tmpl).ok());
  EXPECT_FALSE(PathExists(dir_tmpl));
}

TEST(BootModulesTest, DependenciesFirstBuiltinsSkipped) {
  ModuleIndex index = ParseModuleIndex(
      "kernel/fs/9p/9p.ko.xz: kernel/net/9p/9pnet.ko.xz kernel/fs/netfs/netfs.ko.xz\n"
      "kernel/net/9p/9pnet.ko.xz: kernel/fs/netfs/netfs.ko.xz\n"
      "kernel/fs/netfs/netfs.ko.xz:\n"
      "kernel/drivers/nvme/host/nvme-core.ko.xz:\n",
      "kernel/drivers/virtio/virtio.ko\n");
  absl::StatusOr<std::vector<ModuleIndex::Module>> load = ModulesToLoad(
      index,
      {{"virtio", true}, {"9p", true}, {"netfs", false}, {"nope", false}, {"nvme-core", true}});
  ASSERT_TRUE(load.ok()) << load.status();
  std::vector<std::string> names;
  for (const auto& m : *load) names.push_back(ModuleName(m.path));
  EXPECT_THAT(names, ElementsAre("netfs", "9pnet", "9p", "nvme_core"));
  absl::StatusOr<std::vector<ModuleIndex::Module>> missing =
      ModulesToLoad(index, {{"9pnet_virtio", true}});
  EXPECT_TRUE(absl::IsNotFound(missing.status()));
  EXPECT_THAT(missing.status().message(), HasSubstr("9pnet_virtio"));
}

TEST(CpioTest, NewcLayout) {
  CpioWriter w;
  w.AddDirectory("bin");
  w.AddFile("bin/x", "hello", 0755);
  w.AddCharDevice("dev/console", 0600, 5, 1);
  std::string a = w.Finish();
  EXPECT_EQ(a.size() % 4, 0u);
  ASSERT_GE(a.size(), 110u);
  EXPECT_EQ(a.substr(0, 6), "070701");
  EXPECT_EQ(a.substr(6 + 8, 8), "000041ED");       // mode: directory 0755
  EXPECT_EQ(a.substr(6 + 11 * 8, 8), "00000004");  // namesize: "bin\0"
  EXPECT_EQ(a.substr(110, 3), "bin");
  // The file's header starts at the next 4-byte boundary after "bin\0" (110 + 4 = 114 → 116).
  EXPECT_EQ(a.substr(116, 6), "070701");
  EXPECT_EQ(a.substr(116 + 6 + 6 * 8, 8), "00000005");  // filesize
  EXPECT_NE(a.find("hello"), std::string::npos);
  EXPECT_NE(a.find("TRAILER!!!"), std::string::npos);
  CpioWriter again;
  again.AddDirectory("bin");
  again.AddFile("bin/x", "hello", 0755);
  again.AddCharDevice("dev/console", 0600, 5, 1);
  EXPECT_EQ(again.Finish(), a);  // deterministic
}

VmConfig TestConfig() {
  VmConfig c;
  c.kernel.image = "/k/bzImage";
  c.kernel.release = "6.12.0";
  c.kernel.modules_dir = "/cache/lib/modules/6.12.0";
  c.initramfs = "/cache/i,1.cpio";
  c.guest_program = "/build/blkbench-vm-guest";
  c.disks = {{VmDisk::Kind::kNvme, 1 << 30, "nv1", 4},
             {VmDisk::Kind::kHdd, 1 << 30, "", 0},
             {VmDisk::Kind::kVirtio, 1 << 30, "", 2},
             {VmDisk::Kind::kHdd, 1 << 30, "hd2", 0}};
  return c;
}

TEST(QemuTest, CommandLine) {
  VmConfig c = TestConfig();
  ASSERT_TRUE(ValidateVmConfig(c).ok());
  std::vector<std::string> argv = QemuArgv(c, Accel::kTcg, FilesIn("/tmp/vm,x", c));
  const std::string all = absl::StrJoin(argv, "\n");
  EXPECT_EQ(argv[0], "qemu-system-x86_64");
  EXPECT_THAT(all, HasSubstr("\n-accel\ntcg\n-cpu\nmax\n"));
  EXPECT_THAT(all, HasSubstr("\n-initrd\n/cache/i,1.cpio\n"));  // an argv word, not an option
  EXPECT_THAT(all, HasSubstr("file=/tmp/vm,,x/disk0.raw,if=none"));
  EXPECT_THAT(all, HasSubstr("nvme,drive=disk0,serial=nv1,max_ioqpairs=4"));
  EXPECT_THAT(all,
              HasSubstr("scsi-hd,drive=disk1,bus=scsi0.0,rotation_rate=7200,serial=blkbench1"));
  EXPECT_THAT(all, HasSubstr("virtio-blk-pci,drive=disk2,num-queues=2"));
  EXPECT_EQ(std::count(argv.begin(), argv.end(), "virtio-scsi-pci,id=scsi0"), 1);
  // Every option word is followed by its value: no value stands alone.
  for (size_t i = 1; i < argv.size(); ++i) {
    EXPECT_EQ(argv[i][0] == '-', argv[i - 1][0] != '-' || argv[i - 1] == "-nodefaults" ||
                                     argv[i - 1] == "-no-user-config" ||
                                     argv[i - 1] == "-no-reboot")
        << i << ": " << argv[i];
  }
  EXPECT_THAT(all, HasSubstr("blkbench.load=nvme,virtio_scsi,sd_mod,virtio_blk"));
  EXPECT_THAT(all, HasSubstr("blkbench.disks=4"));
  EXPECT_THAT(all, HasSubstr("blkbench.modules_dir=/cache/lib/modules/6.12.0"));
  EXPECT_THAT(all, HasSubstr("name=blkbench.0"));
  EXPECT_THAT(QemuArgv(c, Accel::kKvm, FilesIn("/d", c)), ::testing::Contains("host"));
}

TEST(QemuTest, ValidationNamesTheField) {
  VmConfig c = TestConfig();
  c.guest_program = "/a b";
  EXPECT_THAT(ValidateVmConfig(c).message(), HasSubstr("guest_program"));
  c = TestConfig();
  c.disks[0].serial = "bad,serial";
  EXPECT_THAT(ValidateVmConfig(c).message(), HasSubstr("serial 'bad,serial'"));
  c = TestConfig();
  c.disks[1].size_bytes = 1000;
  EXPECT_THAT(ValidateVmConfig(c).message(), HasSubstr("disk 1"));
  c = TestConfig();
  c.vcpus = 0;
  EXPECT_THAT(ValidateVmConfig(c).message(), HasSubstr("vcpus"));
}

TEST(GuestAgentTest, ParsesCmdline) {
  GuestBootArgs a = ParseGuestCmdline(
      "console=ttyS0 blkbench.load=nvme,sd_mod blkbench.disks=3 blkbench.disk_wait_ms=1500\n");
  EXPECT_THAT(a.load, ElementsAre("nvme", "sd_mod"));
  EXPECT_EQ(a.disks, 3);
  EXPECT_EQ(a.disk_wait, absl::Milliseconds(1500));
  EXPECT_EQ(ParseGuestCmdline("quiet").disks, 0);
}

TEST(ProcessTest, RunsCapturesAndTimesOut) {
  absl::StatusOr<ProcessResult> r = RunProcess({"sh", "-c", "echo out; echo err >&2; exit 3"});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->ok());
  EXPECT_EQ(DescribeWaitStatus(r->status), "exit 3");
  EXPECT_EQ(r->output, "out\nerr\n");
  EXPECT_TRUE(absl::IsNotFound(RunProcess({"/nonexistent/program"}).status()));
  RunOptions quick;
  quick.timeout = absl::Milliseconds(200);
  const absl::Time start = MonotonicNow();
  EXPECT_TRUE(absl::IsDeadlineExceeded(RunProcess({"sleep", "100"}, quick).status()));
  EXPECT_LT(MonotonicNow() - start, absl::Seconds(5));
  absl::StatusOr<std::string> failed = RunChecked({"sh", "-c", "echo why; exit 2"});
  EXPECT_THAT(failed.status().message(), HasSubstr("exit 2"));
  EXPECT_THAT(failed.status().message(), HasSubstr("why"));
}

TEST(ChannelTest, FramesRoundTripAndFailClearly) {
  int sv[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
  v1::VmRequest req;
  req.mutable_run()->add_argv("uname");
  req.mutable_run()->set_timeout_ms(5);
  const absl::Time deadline = MonotonicNow() + absl::Seconds(5);
  ASSERT_TRUE(WriteFrame(sv[0], req, deadline).ok());
  ASSERT_TRUE(WriteFrame(sv[0], req, deadline).ok());
  FrameReader reader(sv[1]);
  for (int i = 0; i < 2; ++i) {
    v1::VmRequest got;
    ASSERT_TRUE(reader.Read(got, deadline).ok());
    EXPECT_EQ(got.run().argv(0), "uname");
  }
  v1::VmRequest none;
  EXPECT_TRUE(absl::IsDeadlineExceeded(reader.Read(none, MonotonicNow() + absl::Milliseconds(50))));
  const char huge[4] = {0, 0, 0, 0x7f};
  ASSERT_EQ(write(sv[0], huge, 4), 4);
  EXPECT_TRUE(absl::IsDataLoss(reader.Read(none, deadline)));
  close(sv[0]);
  FrameReader eof(sv[1]);
  EXPECT_TRUE(absl::IsUnavailable(eof.Read(none, deadline)));
  close(sv[1]);
}

TEST(FilesTest, FileLockExcludesAnotherProcess) {
  char dir_tmpl[] = "/tmp/vm_unit_XXXXXX";
  ASSERT_NE(mkdtemp(dir_tmpl), nullptr);
  const std::string lock_path = std::string(dir_tmpl) + "/.lock";
  int go[2], got[2];
  ASSERT_EQ(pipe(go), 0);
  ASSERT_EQ(pipe(got), 0);
  // Forked before this process opens the lock file, so the child inherits no lock fd.
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    char c;
    if (read(go[0], &c, 1) != 1) _exit(2);
    absl::StatusOr<FileLock> lock = FileLock::Acquire(lock_path);  // blocks until released
    _exit(lock.ok() && write(got[1], "x", 1) == 1 ? 0 : 1);
  }
  close(go[0]);
  close(got[1]);
  {
    absl::StatusOr<FileLock> lock = FileLock::Acquire(lock_path);
    ASSERT_TRUE(lock.ok()) << lock.status();
    ASSERT_EQ(write(go[1], "g", 1), 1);
    pollfd pfd{got[0], POLLIN, 0};
    EXPECT_EQ(poll(&pfd, 1, 300), 0) << "the child took a lock this process holds";
  }
  pollfd pfd{got[0], POLLIN, 0};
  EXPECT_EQ(poll(&pfd, 1, 10000), 1) << "the child never got the released lock";
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  close(go[1]);
  close(got[0]);
  EXPECT_TRUE(RemoveTree(dir_tmpl).ok());
}

}  // namespace
}  // namespace blkbench::vm
