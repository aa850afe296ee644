// VM test hosts through the whole system, for real: a controller and an agent whose
// config names a VM host booting Debian's newest 6.12 kernel (TCG here, KVM where
// /dev/kvm is usable) with an NVMe and a SCSI disk and per-run null_blk devices. The
// agent offers the guest's devices with the guest's kernel release; cells placed by
// `kernel:` run inside the guest through blkbench-vm-cell, their samples and results
// stored like any other. Needs root, qemu and a warm or reachable kernel cache
// ($HOME/.cache/blkbench-kernels); label vm.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/testing/qemu_children.h"
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

// The kernel as a real axis: one agent with a 6.1 and a 6.12 guest (the newest of each
// line, found with apt-cache), one experiment over `kernel:`. Each run lands on the guest
// whose release matches and stores that release; `results` shows both. In the same 6.1
// guest, bfq on cgroup v2 splits a contended NVMe between a heavy and a light group.
TEST_F(VmHostTest, TwoKernelsInOneExperimentAndBfqGroupsInA61Guest) {
  VmHostConfig k61;
  k61.name = "k61";
  k61.kernel = "deb:6.1.0-*";
  k61.null_blk = true;
  VmDiskConfig nvme;
  nvme.kind = "nvme";
  nvme.size_bytes = 256 << 20;
  k61.disks = {nvme};
  VmHostConfig k612;
  k612.name = "k612";
  k612.kernel = "deb:6.12*";
  k612.null_blk = true;
  AgentConfig config = Config("kernels-agent", {k61, k612});
  AgentProcess agent(config);
  ASSERT_TRUE(agent.ok());
  ASSERT_TRUE(agent.agent().WaitConnected(true, 2 * kConnect));
  std::map<std::string, std::string> release;  // VM host → its guest's uname -r
  const v1::AgentInfo info = Agent("kernels-agent");
  for (const v1::DeviceFacts& d : info.devices()) {
    release[d.vm().name()] = d.vm().release();
  }
  ASSERT_TRUE(absl::StartsWith(release["k61"], "6.1.")) << release["k61"];
  ASSERT_TRUE(absl::StartsWith(release["k612"], "6.12.")) << release["k612"];

  constexpr char kKernels[] = R"(name: vm-kernels
job: {rw: randwrite, bs: 4k, direct: 1, ioengine: io_uring, iodepth: 16, runtime: 2s,
      time_based: 1}
matrix:
  kernel: ["6.1.*", "6.12*"]
target: {device_class: null_blk}
device:
  null_blk: {submit_queues: 1, hw_queue_depth: 64, irqmode: 0, memory_backed: 0}
)";
  const uint64_t kernels = Submit("kernels.yaml", kKernels);
  const v1::Experiment e = WaitForEndWithProgress(kernels, kPerRun);
  ASSERT_EQ(e.state(), v1::EXPERIMENT_DONE) << e.DebugString();
  std::set<std::string> ran_on;
  for (const v1::Run& r : e.runs()) {
    ASSERT_EQ(r.state(), v1::RUN_DONE) << r.error();
    const v1::CellSpec& cell = e.cells(static_cast<int>(r.cell_index()));
    const std::string host = cell.target().kernel() == "6.1.*" ? "k61" : "k612";
    EXPECT_EQ(r.device_path(), "vm:" + host + "/null_blk");
    // The release stored with the result is the guest's own uname -r.
    EXPECT_EQ(r.result().host().kernel_release(), release[host]);
    EXPECT_EQ(r.result().device().vm().release(), release[host]);
    ran_on.insert(r.result().host().kernel_release());
  }
  EXPECT_EQ(ran_on, (std::set<std::string>{release["k61"], release["k612"]}));
  std::string out, err;
  ASSERT_EQ(Cli({"results", absl::StrCat(kernels)}, &out, &err), 0) << err;
  EXPECT_THAT(out, HasSubstr(release["k61"]));
  EXPECT_THAT(out, HasSubstr(release["k612"]));

  // bfq with two weighted groups on cgroup v2 (the host has only v1 blkio): both groups
  // keep the disk busy, so the weights decide the share.
  constexpr char kBfq[] = R"(name: vm-bfq-groups
repeats: 3
job: {rw: randread, bs: 4k, direct: 1, ioengine: io_uring, iodepth: 16, size: 128m, numjobs: 2,
      runtime: 8s, time_based: 1, scheduler: bfq, cgroup: "heavy:1000*1,light:100*1",
      strict_guarantees: 1, slice_idle: 100}
target: {device_class: nvme, kernel: "6.1.*"}
)";
  const uint64_t bfq = Submit("bfq.yaml", kBfq);
  const v1::Experiment b = WaitForEndWithProgress(bfq, kPerRun);
  ASSERT_EQ(b.state(), v1::EXPERIMENT_DONE) << b.DebugString();
  std::vector<double> ratios;
  for (const v1::Run& r : b.runs()) {
    ASSERT_EQ(r.state(), v1::RUN_DONE) << r.error();
    EXPECT_EQ(r.device_path(), "vm:k61/nvme0n1");
    const auto& in = r.result().internals();
    ASSERT_TRUE(in.count("cgroup.1.bytes") && in.count("cgroup.2.bytes")) << r.DebugString();
    const double heavy = in.at("cgroup.1.bytes"), light = in.at("cgroup.2.bytes");
    ASSERT_GT(light, 0) << "the light group did no I/O";
    std::printf("bfq in %s repeat %u: heavy %.0f bytes, light %.0f bytes, ratio %.2f\n",
                release["k61"].c_str(), r.repeat(), heavy, light, heavy / light);
    ratios.push_back(heavy / light);
  }
  // Under TCG the guest's CPUs are the host's threads, and bfq's idling timers fire late
  // when the host preempts them. Without tunables a repeat split less or not at all (idle:
  // 8.0, 2.9, 10.2; beside a -j2 build: 3.0, 2.4, 1.0; in CI 2.1, 0.8, 2.4). The cell sets
  // what bfq's documentation prescribes for guarantees, strict_guarantees=1 and a 100 ms
  // slice_idle, which the agent writes in the guest (idle: 8.3, 8.2, 8.4; beside two busy
  // loops: 3.1, 9.1, 3.1). Equal weights give about 1x: the best repeat must split 2.5x
  // and the middle one 1.5x.
  ASSERT_EQ(ratios.size(), 3u);
  std::sort(ratios.begin(), ratios.end());
  EXPECT_GE(ratios[2], 2.5);
  EXPECT_GE(ratios[1], 1.5);
}

// A kernel that panics at boot (here: its initramfs is never unpacked, so it finds no
// root): the guest is not offered, the agent says why with the guest's console, and a
// cell for it is unplaceable with that reason, at once. Nothing is left running.
TEST_F(VmHostTest, AGuestThatPanicsAtBootIsNotOfferedAndSaysWhy) {
  VmHostConfig bad;
  bad.name = "kpanic";
  bad.kernel = "deb:6.12*";
  bad.null_blk = true;
  bad.cmdline = {"initcall_blacklist=populate_rootfs"};
  AgentConfig config = Config("panic-agent", {bad});
  const absl::Time start = absl::Now();
  AgentProcess agent(config);
  ASSERT_TRUE(agent.ok());
  // Connected once the boot failed: bounded by the boot timeout, not by it running out.
  ASSERT_TRUE(agent.agent().WaitConnected(true, kConnect));
  std::printf("panicking guest refused after %s\n",
              absl::FormatDuration(absl::Now() - start).c_str());
  EXPECT_TRUE(testing::QemuChildren(getpid()).empty());
  EXPECT_EQ(agent.executor().vm_hosts().QemuPid("kpanic"), -1);
  const v1::AgentInfo info = Agent("panic-agent");
  EXPECT_EQ(info.devices_size(), 0) << info.DebugString();
  ASSERT_EQ(info.not_offered_size(), 1) << info.DebugString();
  EXPECT_EQ(info.not_offered(0).path(), "vm:kpanic");
  EXPECT_THAT(info.not_offered(0).reason(), HasSubstr("Kernel panic"));
  EXPECT_THAT(info.not_offered(0).reason(), HasSubstr("console tail"));

  constexpr char kCell[] = R"(name: vm-panic
job: {rw: randread, bs: 4k, runtime: 1s, time_based: 1}
target: {device_class: null_blk, kernel: "6.12*"}
)";
  const std::string path = dir_.File("panic.yaml");
  std::ofstream(path) << kCell;
  std::string out, err;
  Cli({"submit", path}, &out, &err);
  EXPECT_THAT(err + out, HasSubstr("did not offer vm:kpanic"));
  EXPECT_THAT(err + out, HasSubstr("Kernel panic"));
  std::string agents;
  ASSERT_EQ(Cli({"agents"}, &out, &agents), 0);
  EXPECT_THAT(agents, HasSubstr("did not offer vm:kpanic"));
}

// A guest that stops talking mid-run (its qemu SIGSTOPped: a hung kernel, a wedged
// emulator) fails that run once the configured silence has passed, with the console
// tail in the error; the guest is killed, and the next run boots a fresh one.
TEST_F(VmHostTest, AGuestThatGoesSilentMidRunFailsTheRunWithinTheSilenceBound) {
  VmHostConfig h;
  h.name = "ksilent";
  h.kernel = "deb:6.12*";
  h.null_blk = true;
  AgentConfig config = Config("silent-agent", {h});
  // Short against the run's 120 s, long enough for a fresh guest's run setup (null_blk,
  // queue settings: no output yet) on a loaded TCG host, which took over 5 s.
  config.vm_silence_timeout_ms = 15'000;
  AgentProcess agent(config);
  ASSERT_TRUE(agent.ok());
  ASSERT_TRUE(agent.agent().WaitConnected(true, kConnect));

  constexpr char kLong[] = R"(name: vm-silent
job: {rw: randwrite, bs: 4k, direct: 1, ioengine: io_uring, iodepth: 8, runtime: 120s,
      time_based: 1}
target: {device_class: null_blk}
)";
  const uint64_t id = Submit("silent.yaml", kLong);
  // Stop the guest once the run streams samples: it is then mid-run for certain.
  const absl::Time deadline = absl::Now() + kPerRun;
  bool sampling = false;
  while (!sampling && absl::Now() < deadline) {
    auto res = controller().GetResults(id, /*with_samples=*/true);
    sampling = res.ok() && res->rows_size() == 1 && res->rows(0).samples_size() > 0;
    if (!sampling) absl::SleepFor(absl::Milliseconds(100));  // polling a condition, bounded
  }
  ASSERT_TRUE(sampling) << "the run never streamed a sample";
  const pid_t qemu = agent.executor().vm_hosts().QemuPid("ksilent");
  ASSERT_GT(qemu, 0);
  const absl::Time stopped = absl::Now();
  ASSERT_EQ(kill(qemu, SIGSTOP), 0);
  const v1::Experiment e = WaitForEndWithProgress(id, kPerRun);
  const absl::Duration took = absl::Now() - stopped;
  ASSERT_EQ(e.runs_size(), 1);
  const v1::Run& r = e.runs(0);
  ASSERT_EQ(r.state(), v1::RUN_FAILED) << r.DebugString();
  EXPECT_THAT(r.error(), HasSubstr("silent for 15s"));
  EXPECT_THAT(r.error(), HasSubstr("console tail"));
  std::printf("silent guest: run failed %s after SIGSTOP (silence bound 15 s)\n",
              absl::FormatDuration(took).c_str());
  // The silence bound plus the time to kill and report, not the run's 120 s.
  EXPECT_LT(took, absl::Seconds(15) + kPerRun);
  EXPECT_NE(kill(qemu, 0), 0) << "the stopped qemu " << qemu << " is still there";

  // The next run boots a new guest.
  const uint64_t next = Submit("after.yaml", kSeed000);
  const v1::Experiment n = WaitForEndWithProgress(next, kConnect);
  ASSERT_EQ(n.state(), v1::EXPERIMENT_DONE) << n.DebugString();
  const pid_t again = agent.executor().vm_hosts().QemuPid("ksilent");
  EXPECT_GT(again, 0);
  EXPECT_NE(again, qemu);
}

}  // namespace
}  // namespace blkbench
