// `blkbench run --vm ... --kernel ...` without qemu: the flags (kinds, keys, values, the
// pairing of --vm and --kernel) refused with exit 2 before anything boots, the class check
// before the boots, and the kernel axis that two guests give a matrix.
#include "cli/run_vm.h"

#include <sys/stat.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "cli/cli.h"
#include "common/testing/loop_device.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "workloads/format.h"

namespace blkbench {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

absl::StatusOr<std::vector<VmHostConfig>> Hosts(std::vector<std::string> vms,
                                                std::vector<std::string> kernels,
                                                std::string vcpus = "", std::string memory = "") {
  return VmHostsFromFlags({.vms = std::move(vms),
                           .kernels = std::move(kernels),
                           .vcpus = std::move(vcpus),
                           .memory = std::move(memory)});
}

std::string Error(const absl::StatusOr<std::vector<VmHostConfig>>& h) {
  return h.ok() ? "(ok)" : std::string(h.status().message());
}

TEST(RunVmFlagsTest, OneHostPerKernelEachWithEveryDevice) {
  auto hosts = Hosts({"null_blk", "nvme:size=256m,queues=2", "hdd", "virtio:class=ssd"},
                     {"deb:6.12*", "deb:6.1.0-*"}, "4", "1536m");
  ASSERT_TRUE(hosts.ok()) << hosts.status();
  ASSERT_EQ(hosts->size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    const VmHostConfig& h = (*hosts)[i];
    EXPECT_EQ(h.name, i == 0 ? "k0" : "k1");
    EXPECT_EQ(h.kernel, i == 0 ? "deb:6.12*" : "deb:6.1.0-*");
    EXPECT_EQ(h.vcpus, 4);
    EXPECT_EQ(h.memory_mb, 1536);
    EXPECT_TRUE(h.null_blk);
    ASSERT_EQ(h.disks.size(), 3u);
    EXPECT_EQ(h.disks[0].kind, "nvme");
    EXPECT_EQ(h.disks[0].size_bytes, uint64_t{256} << 20);
    EXPECT_EQ(h.disks[0].queues, 2);
    EXPECT_EQ(h.disks[1].size_bytes, uint64_t{1} << 30);  // the default
    EXPECT_THAT(VmDeviceClasses(h), ElementsAre("null_blk", "nvme", "hdd", "ssd"));
  }
  auto plain = Hosts({"null_blk"}, {"/dev/null"});  // a readable file is taken as a bzImage
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_EQ((*plain)[0].vcpus, 2);
  EXPECT_EQ((*plain)[0].memory_mb, 2048);
  EXPECT_TRUE((*plain)[0].disks.empty());
}

TEST(RunVmFlagsTest, MistakesNameTheFlagTheKeyAndWhatIsValid) {
  EXPECT_EQ(Error(Hosts({"nvm"}, {"deb:6.12*"})),
            "--vm 'nvm': unknown kind 'nvm' (did you mean 'nvme'?); expected null_blk, nvme, hdd "
            "or virtio, then optionally :KEY=VALUE,...");
  EXPECT_EQ(Error(Hosts({"nvme:sise=1g"}, {"deb:6.12*"})),
            "--vm 'nvme:sise=1g': unknown key 'sise' (did you mean 'size'?); valid keys for "
            "nvme: size, queues, class");
  EXPECT_EQ(Error(Hosts({"hdd:queues=2"}, {"deb:6.12*"})),
            "--vm 'hdd:queues=2': unknown key 'queues'; valid keys for hdd: size, class");
  EXPECT_THAT(Error(Hosts({"null_blk:size=1g"}, {"deb:6.12*"})),
              HasSubstr("null_blk takes no keys"));
  EXPECT_THAT(Error(Hosts({"null_blk", "null_blk"}, {"deb:6.12*"})), HasSubstr("given twice"));
  EXPECT_THAT(Error(Hosts({"nvme:size=big"}, {"deb:6.12*"})),
              HasSubstr("size: expected a size like 1g or 512m, at least 1m, got 'big'"));
  EXPECT_THAT(Error(Hosts({"nvme:size=4k"}, {"deb:6.12*"})), HasSubstr("at least 1m"));
  EXPECT_THAT(Error(Hosts({"virtio:queues=65"}, {"deb:6.12*"})), HasSubstr("queues: expected"));
  EXPECT_THAT(Error(Hosts({"nvme:size"}, {"deb:6.12*"})), HasSubstr("expected size=VALUE"));
  EXPECT_THAT(Error(Hosts({"nvme:size=1g,size=2g"}, {"deb:6.12*"})),
              HasSubstr("size is given twice"));
  EXPECT_THAT(Error(Hosts({"nvme:class=sim:ssd"}, {"deb:6.12*"})), HasSubstr("not a sim: one"));
  EXPECT_THAT(Error(Hosts({"nvme"}, {})), HasSubstr("--vm needs --kernel SPEC"));
  EXPECT_THAT(Error(Hosts({}, {"deb:6.12*"})), HasSubstr("--kernel needs --vm KIND"));
  EXPECT_THAT(Error(Hosts({"nvme"}, {"deb:6.12*", "deb:6.12*"})),
              HasSubstr("--kernel 'deb:6.12*' is given twice"));
  EXPECT_THAT(Error(Hosts({"nvme"}, {"deb:"})), HasSubstr("--kernel 'deb:': "));
  EXPECT_THAT(Error(Hosts({"nvme"}, {"6.12*"})),
              HasSubstr("--kernel '6.12*': no kernel image '6.12*' (No such file or directory); "
                        "a Debian kernel is --kernel deb:6.12*"));
  EXPECT_THAT(Error(Hosts({"nvme"}, {"deb:6.12*"}, "0")), HasSubstr("--vcpus: expected"));
  EXPECT_THAT(Error(Hosts({"nvme"}, {"deb:6.12*"}, "", "100m")), HasSubstr("--memory: expected"));
}

workloads::Matrix Parse(const std::string& yaml) {
  absl::StatusOr<workloads::Matrix> m = workloads::ParseMatrix(yaml, "m.yaml");
  EXPECT_TRUE(m.ok()) << m.status();
  return m.value_or(workloads::Matrix{});
}

std::vector<std::string> Labels(const workloads::Matrix& m) {
  std::vector<std::string> out;
  for (const v1::CellSpec& c : m.cells) {
    out.push_back(absl::StrCat(c.index(), " ", workloads::CellLabel(c), " @", c.target().kernel()));
  }
  return out;
}

TEST(RunVmFlagsTest, TwoKernelsMakeKernelTheFirstAxisWithExactReleases) {
  const workloads::Matrix m = Parse(
      "name: k\njob: {rw: randread}\nmatrix: {scheduler: [none, bfq]}\n"
      "target: {device_class: null_blk}\n");
  const workloads::Matrix two = WithKernelAxis(m, {"6.12.57+deb12-amd64", "6.1.0-40-amd64"});
  EXPECT_THAT(two.axes, ElementsAre("kernel", "scheduler"));
  EXPECT_THAT(Labels(two),
              ElementsAre("0 kernel=6.12.57+deb12-amd64 scheduler=none @6.12.57+deb12-amd64",
                          "1 kernel=6.12.57+deb12-amd64 scheduler=bfq @6.12.57+deb12-amd64",
                          "2 kernel=6.1.0-40-amd64 scheduler=none @6.1.0-40-amd64",
                          "3 kernel=6.1.0-40-amd64 scheduler=bfq @6.1.0-40-amd64"));
  // One kernel: the matrix as written.
  EXPECT_THAT(Labels(WithKernelAxis(m, {"6.12.57+deb12-amd64"})),
              ElementsAre("0 scheduler=none @", "1 scheduler=bfq @"));

  // A cell's kernel glob keeps it to the kernels it matches; one matching none stays as
  // written (placement names it).
  const workloads::Matrix pinned = Parse(
      "name: k\njob: {rw: randread}\nmatrix: {device_class: [null_blk, nvme]}\n"
      "target: {kernel: \"6.12*\"}\n");
  EXPECT_THAT(Labels(WithKernelAxis(pinned, {"6.12.57+deb12-amd64", "6.1.0-40-amd64"})),
              ElementsAre("0 kernel=6.12.57+deb12-amd64 device_class=null_blk @6.12.57+deb12-amd64",
                          "1 kernel=6.12.57+deb12-amd64 device_class=nvme @6.12.57+deb12-amd64"));
  EXPECT_THAT(Labels(WithKernelAxis(pinned, {"6.2.0", "6.1.0-40-amd64"})),
              ElementsAre("0 device_class=null_blk @6.12*", "1 device_class=nvme @6.12*"));

  // A kernel axis of its own: its globs are matched as written.
  const workloads::Matrix axis = Parse(
      "name: k\njob: {rw: randread}\nmatrix: {kernel: [\"6.1*\", \"6.12*\"]}\n"
      "target: {device_class: null_blk}\n");
  EXPECT_THAT(Labels(WithKernelAxis(axis, {"6.12.57+deb12-amd64", "6.1.0-40-amd64"})),
              ElementsAre("0 kernel=6.1* @6.1*", "1 kernel=6.12* @6.12*"));
}

TEST(RunVmFlagsTest, ACellWhoseClassNoVmDeviceIsIsNamedOncePerClass) {
  const workloads::Matrix m = Parse(
      "name: k\njob: {rw: randread}\nmatrix: {device_class: [null_blk, nvme, ssd], iodepth: [1, "
      "8]}\n");
  EXPECT_EQ(CellsWithoutVmClass(m, "m.yaml", {"null_blk", "nvme", "ssd"}), "");
  EXPECT_EQ(CellsWithoutVmClass(m, "m.yaml", {"null_blk"}),
            "m.yaml: cell 2 (device_class=nvme iodepth=1) and 1 more target device class 'nvme', "
            "which no --vm device is (they are: null_blk); add --vm nvme\n"
            "m.yaml: cell 4 (device_class=ssd iodepth=1) and 1 more target device class 'ssd', "
            "which no --vm device is (they are: null_blk); offer a disk as that class, e.g. --vm "
            "nvme:class=ssd\n");
}

// Through the CLI: each mistake is exit 2 with the message, before the root check, the
// state directory or a boot.
TEST(RunVmFlagsTest, FlagMistakesExitTwoAndBootNothing) {
  testing::TempDir temp("run_vm_flags");  // removed with what the test made in it
  const std::string matrix = temp.File("m.yaml");
  std::ofstream(matrix) << "name: m\njob: {rw: randread, runtime: 1s}\n"
                           "target: {device_class: null_blk}\n";
  const std::string state = temp.File("state");
  auto run = [&](std::vector<std::string> extra, std::string* err) {
    std::vector<std::string> args = {"run", matrix, "--state-dir",
                                     state, "--db", temp.File("r.db")};
    args.insert(args.end(), extra.begin(), extra.end());
    std::ostringstream o, e;
    const int rc = RunCli(args, o, e);
    *err = e.str();
    return rc;
  };
  std::string err;
  EXPECT_EQ(run({"--vm", "nvm", "--kernel", "deb:6.12*"}, &err), 2);
  EXPECT_THAT(err,
              HasSubstr("blkbench run: --vm 'nvm': unknown kind 'nvm' (did you mean 'nvme'?)"));
  EXPECT_EQ(run({"--vm", "nvme:queue=2", "--kernel", "deb:6.12*"}, &err), 2);
  EXPECT_THAT(err, HasSubstr("unknown key 'queue' (did you mean 'queues'?); valid keys for nvme: "
                             "size, queues, class"));
  EXPECT_EQ(run({"--vm", "null_blk"}, &err), 2);
  EXPECT_THAT(err, HasSubstr("--vm needs --kernel SPEC"));
  EXPECT_EQ(run({"--kernel", "deb:6.12*"}, &err), 2);
  EXPECT_THAT(err, HasSubstr("--kernel needs --vm KIND"));
  EXPECT_EQ(run({"--vm", "null_blk", "--kernel", "deb:6.12*", "--device", "/dev/null"}, &err), 2);
  EXPECT_THAT(err, HasSubstr("--vm and --device cannot be combined"));
  EXPECT_EQ(run({"--vm", "null_blk", "--kernel", "deb:6.12*", "--trace", temp.File("t")}, &err), 2);
  EXPECT_THAT(err, HasSubstr("--trace is not available with --vm"));
  // A class no --vm device is: 1, still before anything boots.
  EXPECT_EQ(run({"--vm", "nvme", "--kernel", "deb:6.12*"}, &err), 1);
  EXPECT_THAT(err, HasSubstr("targets device class 'null_blk', which no --vm device is (they are: "
                             "nvme)"));
  EXPECT_THAT(err, HasSubstr("add --vm null_blk"));
  struct stat st;
  EXPECT_NE(stat(state.c_str(), &st), 0) << "the state directory was made";
  EXPECT_NE(stat(temp.File("r.db").c_str(), &st), 0) << "the store was made";
}

}  // namespace
}  // namespace blkbench
