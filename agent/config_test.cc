// Tests for the agent config parser: valid files and errors that name line and key.
#include "agent/config.h"

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace blkbench {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(AgentConfigTest, ParsesAllKeys) {
  auto cfg = ParseAgentConfig(R"(controller: unix:/run/bb.sock
agent_id: lab-7
state_dir: /tmp/state
devices:
  - {path: /dev/loop3, class: ssd}
  - path: /dev/shm/f
    class: file
)",
                              "agent.yaml");
  ASSERT_TRUE(cfg.ok()) << cfg.status();
  EXPECT_EQ(cfg->controller, "unix:/run/bb.sock");
  EXPECT_EQ(cfg->agent_id, "lab-7");
  EXPECT_EQ(cfg->state_dir, "/tmp/state");
  ASSERT_EQ(cfg->devices.size(), 2u);
  EXPECT_EQ(cfg->devices[1].path, "/dev/shm/f");
  EXPECT_EQ(cfg->devices[1].device_class, "file");
}

TEST(AgentConfigTest, KernelNamesInTheAllowlistAreWarnedAbout) {
  auto cfg = ParseAgentConfig(R"(devices:
  - {path: /dev/disk/by-id/nvme-Samsung_SSD_970_S4EWNX0N123456, class: nvme}
  - {path: /dev/sdb, class: hdd}
  - {path: /dev/nvme1n1, class: nvme}
  - {path: /dev/loop3, class: loop}
  - {path: /dev/shm/scratch.img, class: file}
  - {path: /dev/mapper/bench, class: dm}
)",
                              "agent.yaml");
  ASSERT_TRUE(cfg.ok()) << cfg.status();
  ASSERT_EQ(cfg->warnings.size(), 3u);
  EXPECT_THAT(cfg->warnings[0], HasSubstr("agent.yaml:3:5: devices[1]: '/dev/sdb' is a kernel "
                                          "name"));
  EXPECT_THAT(cfg->warnings[0], HasSubstr("allowlist its /dev/disk/by-id path instead"));
  EXPECT_THAT(cfg->warnings[0], HasSubstr("grep -w sdb"));
  EXPECT_THAT(cfg->warnings[1], HasSubstr("devices[2]: '/dev/nvme1n1' is a kernel name"));
  EXPECT_THAT(cfg->warnings[2], HasSubstr("devices[3]: '/dev/loop3' is a kernel name"));
  EXPECT_THAT(cfg->warnings[2], HasSubstr("backing file (path, device and inode)"));
}

TEST(AgentConfigTest, StableNamesAndFilesAreNotKernelNames) {
  EXPECT_EQ(KernelNameWarning("/dev/disk/by-id/wwn-0x5000c500a1b2c3d4"), "");
  EXPECT_EQ(KernelNameWarning("/dev/disk/by-path/pci-0000:00:1f.2-ata-1"), "");
  EXPECT_EQ(KernelNameWarning("/srv/bench/file.img"), "");
  EXPECT_EQ(KernelNameWarning("/dev/"), "");
  EXPECT_EQ(KernelNameWarning("/dev/nullb0"), "");
  EXPECT_THAT(KernelNameWarning("/dev/vdb"), HasSubstr("'/dev/vdb' is a kernel name"));
  EXPECT_THAT(KernelNameWarning("/dev/mmcblk0"), HasSubstr("kernel name"));
}

TEST(AgentConfigTest, DefaultsAgentIdToHostName) {
  auto cfg = ParseAgentConfig("devices: []\n", "a.yaml");
  ASSERT_TRUE(cfg.ok()) << cfg.status();
  EXPECT_FALSE(cfg->agent_id.empty());
}

TEST(AgentConfigTest, ErrorsNameFileLineAndKey) {
  auto cfg = ParseAgentConfig(R"(controller: x:1
devices:
  - {path: /dev/loop3}
  - {path: relative, class: ssd, colour: red}
  - {path: /dev/loop3, class: hdd}
stat_dir: /tmp
)",
                              "agent.yaml");
  ASSERT_FALSE(cfg.ok());
  const std::string msg(cfg.status().message());
  // No class is no error: the agent detects it from sysfs (DetectDeviceClass).
  EXPECT_THAT(msg, ::testing::Not(HasSubstr("devices[0]")));
  EXPECT_THAT(msg, HasSubstr("agent.yaml:4:34: devices[1]: unknown key 'colour'; valid keys: "
                             "path, class"));
  EXPECT_THAT(msg, HasSubstr("agent.yaml:4:12: devices[1].path: expected an absolute path (a "
                             "block device or a regular file), got 'relative'"));
  EXPECT_THAT(msg, HasSubstr("agent.yaml:5:12: devices[2].path: '/dev/loop3' is listed twice "
                             "(first at line 3)"));
  EXPECT_THAT(msg, HasSubstr("agent.yaml:6:1: unknown key 'stat_dir' (did you mean "
                             "'state_dir'?); valid keys: controller, agent_id,"));
}

TEST(AgentConfigTest, NullBlkSectionEnablesPerRunDevices) {
  auto off = ParseAgentConfig("devices: []\n", "agent.yaml");
  ASSERT_TRUE(off.ok()) << off.status();
  EXPECT_FALSE(off->null_blk.enabled);
  auto defaults = ParseAgentConfig("null_blk:\n", "agent.yaml");
  ASSERT_TRUE(defaults.ok()) << defaults.status();
  EXPECT_TRUE(defaults->null_blk.enabled);
  EXPECT_EQ(defaults->null_blk.configfs, "/sys/kernel/config");
  EXPECT_EQ(defaults->null_blk.dev, "/dev");
  EXPECT_FALSE(defaults->null_blk.load_module);
  auto cfg = ParseAgentConfig(
      "null_blk: {configfs: /mnt/configfs, dev: /mnt/dev, load_module: true}\n", "agent.yaml");
  ASSERT_TRUE(cfg.ok()) << cfg.status();
  EXPECT_EQ(cfg->null_blk.configfs, "/mnt/configfs");
  EXPECT_EQ(cfg->null_blk.dev, "/mnt/dev");
  EXPECT_TRUE(cfg->null_blk.load_module);
  auto bad = ParseAgentConfig("null_blk: {configfs: rel, modprobe: 1}\n", "agent.yaml");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(),
              HasSubstr("agent.yaml:1:22: null_blk.configfs: expected an absolute path"));
  EXPECT_THAT(bad.status().message(), HasSubstr("agent.yaml:1:27: null_blk: unknown key "
                                                "'modprobe'; valid keys: configfs, dev, "
                                                "load_module"));
}

TEST(AgentConfigTest, CgroupParentIsARelativeCgroupPath) {
  auto cfg = ParseAgentConfig("cgroup_parent: lab.slice/bench\n", "agent.yaml");
  ASSERT_TRUE(cfg.ok()) << cfg.status();
  EXPECT_EQ(cfg->cgroup_parent, "lab.slice/bench");
  EXPECT_EQ(ParseAgentConfig("{}\n", "agent.yaml")->cgroup_parent, "blkbench");
  for (const char* bad : {"/sys/fs/cgroup/x", "../x", "a//b"}) {
    auto refused = ParseAgentConfig(absl::StrCat("cgroup_parent: ", bad, "\n"), "agent.yaml");
    EXPECT_THAT(refused.status().message(),
                HasSubstr("agent.yaml:1:16: cgroup_parent: expected a relative cgroup path"))
        << bad;
  }
}

TEST(AgentConfigTest, YamlSyntaxErrorHasLine) {
  auto cfg = ParseAgentConfig("devices:\n  - {path: /dev/x, class: ssd\n", "bad.yaml");
  ASSERT_FALSE(cfg.ok());
  EXPECT_THAT(std::string(cfg.status().message()), HasSubstr("bad.yaml:"));
}

TEST(AgentConfigTest, MetricsListenAndGrace) {
  auto cfg = ParseAgentConfig("metrics_listen: 0.0.0.0:9471\nmetrics_grace_ms: 60000\n", "a.yaml");
  ASSERT_TRUE(cfg.ok()) << cfg.status();
  EXPECT_EQ(cfg->metrics_listen, "0.0.0.0:9471");
  EXPECT_EQ(cfg->metrics_grace_ms, 60000);
  auto off = ParseAgentConfig("metrics_listen: \"\"\n", "a.yaml");
  ASSERT_TRUE(off.ok()) << off.status();
  EXPECT_EQ(off->metrics_listen, "");
  auto bad = ParseAgentConfig("metrics_listen: 9471\nmetrics_grace_ms: -5\n", "a.yaml");
  EXPECT_THAT(bad.status().message(), HasSubstr("a.yaml:1:17: metrics_listen: expected host:port"));
  EXPECT_THAT(bad.status().message(),
              HasSubstr("a.yaml:2:19: metrics_grace_ms: expected milliseconds >= 0, got '-5'"));
}

// The simulated devices an agent offers are the engine's (common/sim_vocabulary.h): a
// typo is refused at startup rather than offered and failed at the first run.
TEST(AgentConfigTest, SimDevicesAreTheEnginesClasses) {
  auto cfg = ParseAgentConfig("sim_devices: [sim:hdd-seed003, sim:optane-p5800x]\n", "a.yaml");
  ASSERT_TRUE(cfg.ok()) << cfg.status();
  EXPECT_THAT(cfg->sim_devices, ElementsAre("sim:hdd-seed003", "sim:optane-p5800x"));
  EXPECT_THAT(ParseAgentConfig("{}\n", "a.yaml")->sim_devices,
              ElementsAre("sim:null_blk", "sim:hdd", "sim:ssd", "sim:optane"));
  auto bad = ParseAgentConfig("sim_devices: [sim:ssd, sim:nvme]\n", "a.yaml");
  EXPECT_THAT(bad.status().message(),
              HasSubstr("a.yaml:1:24: sim_devices[1]: expected a simulated device class "
                        "(sim:null_blk, sim:hdd, sim:hdd-seed003, sim:ssd, sim:ssd-sata, "
                        "sim:ssd-seed004, sim:optane, sim:optane-p5800x), got 'sim:nvme'"));
}

TEST(AgentConfigTest, MissingFileIsNotFound) {
  auto cfg = LoadAgentConfig("/nonexistent/agent.yaml");
  EXPECT_TRUE(absl::IsNotFound(cfg.status()));
}

// Plain text to another host is a decision in the config, and off by default; the
// default controller is the local Unix socket.
TEST(AgentConfigTest, InsecureIsOffByDefaultAndTheDefaultControllerIsTheLocalSocket) {
  auto plain = ParseAgentConfig("agent_id: a1\n", "agent.yaml");
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_FALSE(plain->insecure);
  EXPECT_EQ(plain->controller, "unix:/run/blkbench/controller.sock");
  auto insecure = ParseAgentConfig("controller: 10.1.2.3:7450\ninsecure: true\n", "agent.yaml");
  ASSERT_TRUE(insecure.ok()) << insecure.status();
  EXPECT_TRUE(insecure->insecure);
}

// VM test hosts (docs/vm-hosts.md): the example of deploy/config/agent.example.yaml.
TEST(AgentConfigTest, VmHostsAreReadIntoTheirStructs) {
  auto cfg = ParseAgentConfig(R"(kernel_cache: /var/cache/blkbench/kernels
vm_boot_timeout_ms: 600000
vm_silence_timeout_ms: 45000
vm_hosts:
  - name: k612
    kernel: "deb:6.12*"
    vcpus: 4
    memory_mb: 4096
    accel: tcg
    null_blk: true
    disks:
      - {kind: nvme, size: 1G, queues: 2, serial: bbnvme0}
      - {kind: hdd, size: 2G}
      - {kind: virtio, class: virtio}
  - name: my_build-2
    kernel: /srv/linux/arch/x86/boot/bzImage:/srv/modules
    disks: [{kind: nvme, size: 512M}]
)",
                              "agent.yaml");
  ASSERT_TRUE(cfg.ok()) << cfg.status();
  EXPECT_EQ(cfg->kernel_cache, "/var/cache/blkbench/kernels");
  EXPECT_EQ(cfg->vm_boot_timeout_ms, 600000);
  EXPECT_EQ(cfg->vm_silence_timeout_ms, 45000);
  ASSERT_EQ(cfg->vm_hosts.size(), 2u);
  const VmHostConfig& k612 = cfg->vm_hosts[0];
  EXPECT_EQ(k612.name, "k612");
  EXPECT_EQ(k612.kernel, "deb:6.12*");
  EXPECT_EQ(k612.vcpus, 4);
  EXPECT_EQ(k612.memory_mb, 4096);
  EXPECT_EQ(k612.accel, "tcg");
  EXPECT_TRUE(k612.null_blk);
  ASSERT_EQ(k612.disks.size(), 3u);
  EXPECT_EQ(k612.disks[0].kind, "nvme");
  EXPECT_EQ(k612.disks[0].size_bytes, uint64_t{1} << 30);
  EXPECT_EQ(k612.disks[0].queues, 2);
  EXPECT_EQ(k612.disks[0].serial, "bbnvme0");
  EXPECT_EQ(k612.disks[1].kind, "hdd");
  EXPECT_EQ(k612.disks[1].size_bytes, uint64_t{2} << 30);
  EXPECT_EQ(k612.disks[1].serial, "");
  EXPECT_EQ(k612.disks[2].kind, "virtio");
  EXPECT_EQ(k612.disks[2].device_class, "virtio");
  const VmHostConfig& mine = cfg->vm_hosts[1];
  EXPECT_EQ(mine.kernel, "/srv/linux/arch/x86/boot/bzImage:/srv/modules");
  EXPECT_EQ(mine.vcpus, 2);  // the defaults
  EXPECT_EQ(mine.memory_mb, 2048);
  EXPECT_EQ(mine.accel, "auto");
  EXPECT_FALSE(mine.null_blk);
  ASSERT_EQ(mine.disks.size(), 1u);
  EXPECT_EQ(mine.disks[0].size_bytes, uint64_t{512} << 20);
  EXPECT_EQ(mine.disks[0].queues, 0);
}

TEST(AgentConfigTest, NoVmHostsByDefault) {
  auto cfg = ParseAgentConfig("{}\n", "agent.yaml");
  ASSERT_TRUE(cfg.ok()) << cfg.status();
  EXPECT_TRUE(cfg->vm_hosts.empty());
  EXPECT_EQ(cfg->kernel_cache, "");
  EXPECT_EQ(cfg->vm_boot_timeout_ms, 300'000);
  EXPECT_EQ(cfg->vm_silence_timeout_ms, 30'000);
  auto only_null_blk = ParseAgentConfig(
      "vm_hosts:\n  - {name: nb, kernel: \"deb:6.1*\", null_blk: true}\n", "agent.yaml");
  ASSERT_TRUE(only_null_blk.ok()) << only_null_blk.status();
  EXPECT_TRUE(only_null_blk->vm_hosts[0].disks.empty());
}

// Kernel arguments: one word each; blkbench's own are refused where they are written.
TEST(AgentConfigTest, VmHostKernelArguments) {
  auto ok = ParseAgentConfig(
      "vm_hosts:\n  - {name: nb, kernel: \"deb:6.1*\", null_blk: true,\n"
      "     cmdline: [mitigations=off, nokaslr]}\n",
      "agent.yaml");
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ(ok->vm_hosts[0].cmdline, (std::vector<std::string>{"mitigations=off", "nokaslr"}));
  auto bad = ParseAgentConfig(
      "vm_hosts:\n  - {name: nb, kernel: \"deb:6.1*\", null_blk: true,\n"
      "     cmdline: [\"a b\", rdinit=/x, blkbench.guest=/y]}\n",
      "agent.yaml");
  ASSERT_FALSE(bad.ok());
  const std::string m(bad.status().message());
  EXPECT_THAT(m,
              HasSubstr("agent.yaml:3:16: vm_hosts[0].cmdline[0]: expected one kernel argument"));
  EXPECT_THAT(m, HasSubstr("has a space"));
  EXPECT_THAT(m, HasSubstr("vm_hosts[0].cmdline[1]"));
  EXPECT_THAT(m, HasSubstr("rdinit=... is set by blkbench itself"));
  EXPECT_THAT(m, HasSubstr("vm_hosts[0].cmdline[2]"));
}

// Every kind of bad value, each at its line and column with what was expected, all in
// one error.
TEST(AgentConfigTest, VmHostErrorsNameTheirPlaceAndWhatWasExpected) {
  auto cfg = ParseAgentConfig(R"(kernel_cache: cache
vm_boot_timeout_ms: 0
vm_silence_timeout_ms: -1
vm_hosts:
  - name: "k 612"
    kernel: "deb:"
    vcpus: 0
    memory_mb: 128
    accel: kvn
    null_blk: maybe
    disks:
      - {kind: floppy, size: 512k, queues: 65, serial: "no spaces"}
      - {size: 1Q, class: ""}
  - name: this-name-is-far-too-long-for-a-vm-host
    kernel: /boot/vmlinuz
    disks: []
  - kernel: /boot/vmlinuz
    disks: {kind: nvme}
)",
                              "agent.yaml");
  ASSERT_FALSE(cfg.ok());
  EXPECT_EQ(cfg.status().code(), absl::StatusCode::kInvalidArgument);
  const std::string msg(cfg.status().message());
  const std::vector<std::string> expected = {
      "agent.yaml:1:15: kernel_cache: expected an absolute path, got 'cache'",
      "agent.yaml:2:21: vm_boot_timeout_ms: expected milliseconds > 0, got '0'",
      "agent.yaml:3:24: vm_silence_timeout_ms: expected milliseconds > 0, got '-1'",
      "agent.yaml:5:11: vm_hosts[0].name: expected a name of 1 to 32 of A-Z a-z 0-9 _ -, got "
      "'k 612'",
      "agent.yaml:6:13: vm_hosts[0].kernel: expected a kernel spec, deb:PATTERN or "
      "PATH/bzImage[:MODULES_DIR], got 'deb:'; kernel spec 'deb:': expected deb:PACKAGE-OR-GLOB",
      "agent.yaml:7:12: vm_hosts[0].vcpus: expected an integer from 1 to 64, got '0'",
      "agent.yaml:8:16: vm_hosts[0].memory_mb: expected an integer from 256 to 65536, got '128'",
      "agent.yaml:9:12: vm_hosts[0].accel: expected auto, kvm or tcg, got 'kvn' (did you mean "
      "'kvm'?)",
      "agent.yaml:10:15: vm_hosts[0].null_blk: expected true or false, got 'maybe'",
      "agent.yaml:12:16: vm_hosts[0].disks[0].kind: expected nvme, hdd or virtio, got 'floppy'",
      "agent.yaml:12:30: vm_hosts[0].disks[0].size: expected a size like 1G or 512M, at least "
      "1M, got '512k'",
      "agent.yaml:12:44: vm_hosts[0].disks[0].queues: expected an integer from 0 (qemu's "
      "default) to 64, got '65'",
      "agent.yaml:12:56: vm_hosts[0].disks[0].serial: expected up to 20 of A-Z a-z 0-9 _ - "
      "(\"\" for blkbench<index>), got 'no spaces'",
      "agent.yaml:13:9: vm_hosts[0].disks[1]: key 'kind' is required (expected nvme, hdd or "
      "virtio)",
      "agent.yaml:13:16: vm_hosts[0].disks[1].size: expected a size like 1G or 512M, at least "
      "1M, got '1Q'; '1Q' has an unknown size suffix 'q'",
      "agent.yaml:13:27: vm_hosts[0].disks[1].class: expected a device class like nvme, hdd, "
      "ssd, or a label of your own, got ''",
      "agent.yaml:14:5: vm_hosts[1]: expected at least one disk (disks: [{kind: nvme}]) or "
      "null_blk: true",
      "agent.yaml:14:11: vm_hosts[1].name: expected a name of 1 to 32 of A-Z a-z 0-9 _ -, got "
      "'this-name-is-far-too-long-for-a-vm-host'",
      "agent.yaml:17:5: vm_hosts[2]: key 'name' is required (expected a name of 1 to 32 of A-Z "
      "a-z 0-9 _ -)",
      "agent.yaml:18:12: vm_hosts[2].disks: expected a list of disks like [{kind: nvme, size: "
      "1G}], got a map",
  };
  for (const std::string& line : expected) EXPECT_THAT(msg, HasSubstr(line));
  // One line each, nothing else (a bad `disks:` is not also "no disks").
  EXPECT_EQ(std::count(msg.begin(), msg.end(), '\n') + 1, static_cast<long>(expected.size()))
      << msg;
}

TEST(AgentConfigTest, VmHostTyposGetDidYouMean) {
  auto cfg = ParseAgentConfig(R"(vm_host:
  - {name: a, kernel: "deb:6.1*"}
vm_hosts:
  - name: k612
    kernel: "deb:6.12*"
    vcpu: 4
    disks:
      - {kind: nvme, sise: 1G}
)",
                              "agent.yaml");
  ASSERT_FALSE(cfg.ok());
  const std::string msg(cfg.status().message());
  EXPECT_THAT(msg, HasSubstr("agent.yaml:1:1: unknown key 'vm_host' (did you mean 'vm_hosts'?)"));
  EXPECT_THAT(msg, HasSubstr("agent.yaml:6:5: vm_hosts[0]: unknown key 'vcpu' (did you mean "
                             "'vcpus'?); valid keys: name, kernel, vcpus, memory_mb, accel, "
                             "null_blk, cmdline, disks"));
  EXPECT_THAT(msg, HasSubstr("agent.yaml:8:22: vm_hosts[0].disks[0]: unknown key 'sise' (did "
                             "you mean 'size'?); valid keys: kind, size, queues, serial, class"));
}

TEST(AgentConfigTest, VmHostNamesAndDiskSerialsAreUnique) {
  auto cfg = ParseAgentConfig(R"(vm_hosts:
  - name: a
    kernel: "deb:6.1*"
    disks: [{kind: nvme, serial: s0}, {kind: hdd}, {kind: hdd}, {kind: nvme, serial: s0}]
  - name: a
    kernel: "deb:6.12*"
    null_blk: true
)",
                              "agent.yaml");
  ASSERT_FALSE(cfg.ok());
  const std::string msg(cfg.status().message());
  EXPECT_THAT(msg, HasSubstr("agent.yaml:4:86: vm_hosts[0].disks[3].serial: 's0' is listed "
                             "twice (first at line 4)"));
  EXPECT_THAT(msg, HasSubstr("agent.yaml:5:11: vm_hosts[1].name: 'a' is listed twice (first at "
                             "line 2)"));
  EXPECT_EQ(std::count(msg.begin(), msg.end(), '\n'), 1) << msg;  // no serial "" clash
}

TEST(AgentConfigTest, RepeatedKeysAreErrors) {
  auto cfg = ParseAgentConfig("agent_id: a\nstate_dir: /x\nagent_id: b\n", "agent.yaml");
  EXPECT_THAT(cfg.status().message(),
              HasSubstr("agent.yaml:3:1: key 'agent_id' appears twice (first at line 1)"));
}

// deploy/config/agent.example.yaml is valid, and so is its VM section uncommented.
TEST(AgentConfigTest, TheExampleIsValidWithItsVmHostsUncommented) {
  const std::string path = BLKBENCH_SOURCE_DIR "/deploy/config/agent.example.yaml";
  auto example = LoadAgentConfig(path);
  ASSERT_TRUE(example.ok()) << example.status();
  EXPECT_TRUE(example->vm_hosts.empty());
  std::ifstream in(path);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string marker = "Uncomment to use:\n";
  const size_t at = text.find(marker);
  ASSERT_NE(at, std::string::npos);
  std::string uncommented = text.substr(0, at + marker.size());
  for (absl::string_view line : absl::StrSplit(text.substr(at + marker.size()), '\n')) {
    absl::StrAppend(&uncommented, absl::StripPrefix(line, "# "), "\n");
  }
  auto vm = ParseAgentConfig(uncommented, path);
  ASSERT_TRUE(vm.ok()) << vm.status() << "\n" << uncommented;
  EXPECT_EQ(vm->kernel_cache, "/var/cache/blkbench/kernels");
  ASSERT_EQ(vm->vm_hosts.size(), 1u);
  EXPECT_EQ(vm->vm_hosts[0].kernel, "deb:6.12*");
  EXPECT_EQ(vm->vm_hosts[0].disks.size(), 3u);
}

}  // namespace
}  // namespace blkbench
