// Tests for the agent config parser: valid files and errors that name line and key.
#include "agent/config.h"

#include "absl/strings/str_cat.h"
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
  EXPECT_THAT(msg, HasSubstr("agent.yaml:4:34: devices[1]: unknown key 'colour'"));
  EXPECT_THAT(msg, HasSubstr("'path' must be absolute, got 'relative'"));
  EXPECT_THAT(msg, HasSubstr("'/dev/loop3' is listed twice"));
  EXPECT_THAT(msg, HasSubstr("agent.yaml:6:1: unknown key 'stat_dir'"));
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
  EXPECT_THAT(bad.status().message(), HasSubstr("'null_blk.configfs' must be absolute"));
  EXPECT_THAT(bad.status().message(), HasSubstr("null_blk: unknown key 'modprobe'"));
}

TEST(AgentConfigTest, CgroupParentIsARelativeCgroupPath) {
  auto cfg = ParseAgentConfig("cgroup_parent: lab.slice/bench\n", "agent.yaml");
  ASSERT_TRUE(cfg.ok()) << cfg.status();
  EXPECT_EQ(cfg->cgroup_parent, "lab.slice/bench");
  EXPECT_EQ(ParseAgentConfig("{}\n", "agent.yaml")->cgroup_parent, "blkbench");
  for (const char* bad : {"/sys/fs/cgroup/x", "../x", "a//b"}) {
    auto refused = ParseAgentConfig(absl::StrCat("cgroup_parent: ", bad, "\n"), "agent.yaml");
    EXPECT_THAT(refused.status().message(),
                HasSubstr("agent.yaml:1:16: 'cgroup_parent': expected a relative cgroup path"))
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
  EXPECT_THAT(bad.status().message(),
              HasSubstr("a.yaml:1:17: 'metrics_listen': expected host:port"));
  EXPECT_THAT(bad.status().message(), HasSubstr("a.yaml:2:19: 'metrics_grace_ms'"));
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

}  // namespace
}  // namespace blkbench
