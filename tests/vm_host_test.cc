// VM test hosts through the whole system, for real: a controller and an agent whose
// config names a VM host booting Debian's newest 6.12 kernel (TCG here, KVM where
// /dev/kvm is usable) with an NVMe and a SCSI disk and per-run null_blk devices. The
// agent offers the guest's devices with the guest's kernel release; cells placed by
// `kernel:` run inside the guest through blkbench-vm-cell, their samples and results
// stored like any other. Needs root, qemu and a warm or reachable kernel cache
// ($HOME/.cache/blkbench-kernels); label vm.
#include <signal.h>
#include <sys/stat.h>

#include <fstream>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/vm/files.h"
#include "common/vm/qemu.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/test_cluster.h"

namespace blkbench {
namespace {

using testing::AgentProcess;
using ::testing::HasSubstr;

// TCG on a shared 2-core machine (and the ASan build): a boot takes 8-25 s, more under
// load. These bound a hang, not speed.
constexpr int64_t kBootTimeoutMs = 300'000;
constexpr absl::Duration kConnect = absl::Minutes(6);  // boot + offer, per guest
constexpr absl::Duration kPerRun = absl::Minutes(3);

constexpr char kSeed000[] = R"(name: vm-seed-000
job: {rw: randwrite, bs: 4k, direct: 1, ioengine: io_uring, iodepth: 32, numjobs: 2,
      iodepth_batch_submit: 8, iodepth_batch_complete: 8, runtime: 2s, time_based: 1}
matrix:
  scheduler: [none, mq-deadline]
target: {device_class: null_blk, kernel: "6.12*"}
device:
  null_blk: {submit_queues: 2, hw_queue_depth: 64, irqmode: 0, completion_nsec: 0, blocksize: 512, memory_backed: 0}
)";

constexpr char kDisks[] = R"(name: vm-disks
job: {rw: randread, bs: 4k, direct: 1, ioengine: io_uring, iodepth: 8, size: 64m,
      runtime: 1s, time_based: 1}
matrix:
  device_class: [nvme, hdd]
target: {kernel: "6.12*"}
)";

class VmHostTest : public testing::ClusterTest {
 protected:
  VmHostTest() : ClusterTest("vm_host_test") {}
  void SetUp() override {
    if (absl::StatusOr<std::string> v = vm::QemuVersion("qemu-system-x86_64"); !v.ok()) {
      GTEST_SKIP() << "qemu is absent: " << v.status().message();
    }
    ClusterTest::SetUp();
  }

  AgentConfig Config(const std::string& id, std::vector<VmHostConfig> hosts) {
    AgentConfig c;
    c.agent_id = id;
    c.controller = ControllerAddress();
    c.state_dir = dir_.File(id + "-state");
    c.sim_devices.clear();
    c.metrics_listen.clear();
    c.vm_hosts = std::move(hosts);
    c.vm_boot_timeout_ms = kBootTimeoutMs;
    return c;
  }

  static VmHostConfig Host612() {
    VmHostConfig h;
    h.name = "k612";
    h.kernel = "deb:6.12*";
    h.null_blk = true;
    VmDiskConfig nvme;
    nvme.kind = "nvme";
    nvme.size_bytes = 256 << 20;
    nvme.queues = 2;
    nvme.serial = "bbnvme0";
    VmDiskConfig hdd;
    hdd.kind = "hdd";
    hdd.size_bytes = 256 << 20;
    h.disks = {nvme, hdd};
    return h;
  }

  uint64_t Submit(const std::string& name, const char* matrix) {
    const std::string path = dir_.File(name);
    std::ofstream(path) << matrix;
    std::string out, err;
    EXPECT_EQ(Cli({"submit", path}, &out, &err), 0) << err;
    auto listed = controller().ListExperiments(0);
    EXPECT_TRUE(listed.ok() && !listed->empty());
    return listed.ok() && !listed->empty() ? (*listed)[0].id() : 0;
  }

  v1::AgentInfo Agent(const std::string& id) {
    auto agents = controller().ListAgents();
    EXPECT_TRUE(agents.ok()) << agents.status();
    for (const v1::AgentInfo& a : agents.value_or(std::vector<v1::AgentInfo>{})) {
      if (a.agent_id() == id) return a;
    }
    return {};
  }
};

TEST_F(VmHostTest, NullBlkNvmeAndHddInA612GuestRunThroughControllerAndAgent) {
  AgentConfig config = Config("vm-agent", {Host612()});
  pid_t qemu = -1;
  {
    AgentProcess agent(config);
    ASSERT_TRUE(agent.ok());
    ASSERT_TRUE(agent.agent().WaitConnected(true, kConnect));
    const v1::AgentInfo info = Agent("vm-agent");
    std::map<std::string, v1::DeviceFacts> by_path;
    for (const v1::DeviceFacts& d : info.devices()) by_path[d.path()] = d;
    ASSERT_EQ(by_path.count("vm:k612/nvme0n1"), 1u) << info.DebugString();
    ASSERT_EQ(by_path.count("vm:k612/sda"), 1u) << info.DebugString();
    ASSERT_EQ(by_path.count("vm:k612/null_blk"), 1u) << info.DebugString();
    // Registered by detection inside the guest, each with the guest's kernel.
    EXPECT_EQ(by_path["vm:k612/nvme0n1"].device_class(), "nvme");
    EXPECT_FALSE(by_path["vm:k612/nvme0n1"].rotational());
    EXPECT_EQ(by_path["vm:k612/nvme0n1"].serial(), "bbnvme0");
    EXPECT_EQ(by_path["vm:k612/sda"].device_class(), "hdd");
    EXPECT_TRUE(by_path["vm:k612/sda"].rotational());
    EXPECT_EQ(by_path["vm:k612/null_blk"].device_class(), "null_blk");
    const v1::VmFacts vm = by_path["vm:k612/nvme0n1"].vm();
    EXPECT_TRUE(absl::StartsWith(vm.release(), "6.12")) << vm.DebugString();
    EXPECT_NE(vm.release(), info.host().kernel_release());
    EXPECT_THAT(vm.accel(), ::testing::AnyOf("tcg", "kvm"));
    EXPECT_EQ(vm.kernel_spec(), "deb:6.12*");
    EXPECT_FALSE(vm.kernel_sha256().empty());

    // Seed 000's null_blk, made inside the guest per run.
    const uint64_t seed = Submit("seed000.yaml", kSeed000);
    const v1::Experiment e = WaitForEndWithProgress(seed, kPerRun);
    ASSERT_EQ(e.state(), v1::EXPERIMENT_DONE) << e.DebugString();
    auto results = controller().GetResults(seed, /*with_samples=*/true);
    ASSERT_TRUE(results.ok()) << results.status();
    ASSERT_EQ(results->rows_size(), 2);
    for (const v1::ResultRow& row : results->rows()) {
      const v1::Run& r = row.run();
      ASSERT_EQ(r.state(), v1::RUN_DONE) << r.error();
      EXPECT_GE(row.samples_size(), 1) << "no samples streamed from the guest";
      EXPECT_EQ(r.device_path(), "vm:k612/null_blk");
      EXPECT_EQ(r.result().host().kernel_release(), vm.release());
      EXPECT_EQ(r.result().device().vm().release(), vm.release());
      EXPECT_EQ(r.result().device().device_class(), "null_blk");
      EXPECT_FALSE(r.result().device().kernel_name().empty()) << r.result().device().DebugString();
      EXPECT_GT(r.result().io().write_ios(), 0u);
    }

    const uint64_t disks = Submit("disks.yaml", kDisks);
    const v1::Experiment d = WaitForEndWithProgress(disks, kPerRun);
    ASSERT_EQ(d.state(), v1::EXPERIMENT_DONE) << d.DebugString();
    std::set<std::string> devices;
    for (const v1::Run& r : d.runs()) {
      ASSERT_EQ(r.state(), v1::RUN_DONE) << r.error();
      devices.insert(r.device_path());
      EXPECT_GT(r.result().io().read_ios(), 0u);
    }
    EXPECT_EQ(devices, (std::set<std::string>{"vm:k612/nvme0n1", "vm:k612/sda"}));
    qemu = agent.executor().vm_hosts().QemuPid("k612");
  }
  // The agent is gone: so are its guest and the guest's directory.
  if (qemu > 0) {
    EXPECT_NE(kill(qemu, 0), 0) << "qemu " << qemu << " outlived the agent";
  }
  EXPECT_FALSE(vm::PathExists(config.state_dir + "/vms/")) << "VM files left behind";
}

}  // namespace
}  // namespace blkbench
