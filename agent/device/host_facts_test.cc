// Tests for host facts: a fake /proc and /sys, and a sanity check of the real ones.
#include "agent/device/host_facts.h"

#include "agent/device/testutil.h"
#include "gtest/gtest.h"

namespace blkbench {
namespace {

TEST(CountCpuListTest, RangesAndSingles) {
  EXPECT_EQ(CountCpuList("0"), 1u);
  EXPECT_EQ(CountCpuList("0-3\n"), 4u);
  EXPECT_EQ(CountCpuList("0-3,8,10-11"), 7u);
  EXPECT_EQ(CountCpuList(""), 0u);
  EXPECT_EQ(CountCpuList("3-1"), 0u);
  EXPECT_EQ(CountCpuList("x"), 0u);
}

TEST(HostFactsTest, ReadsAFakeTree) {
  testing::TempDir tmp;
  SystemPaths paths = testing::FakePaths(tmp.path());
  testing::WriteFile(paths.procfs + "/sys/kernel/hostname", "lab-7\n");
  testing::WriteFile(paths.procfs + "/sys/kernel/osrelease", "6.16.0-rc1+\n");
  testing::WriteFile(paths.procfs + "/sys/kernel/version", "#12 SMP PREEMPT_DYNAMIC\n");
  testing::WriteFile(paths.procfs + "/cmdline", "root=/dev/sda1 mitigations=off\n");
  testing::WriteFile(paths.procfs + "/cpuinfo",
                     "processor\t: 0\nvendor_id\t: GenuineIntel\n"
                     "model name\t: Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz\n\n"
                     "processor\t: 1\nmodel name\t: Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz\n");
  testing::WriteFile(paths.procfs + "/meminfo",
                     "MemTotal:       16303496 kB\nMemFree:         1000 kB\n");
  testing::WriteFile(paths.sysfs + "/devices/system/cpu/online", "0-63,96-127\n");

  v1::HostFacts facts = ReadHostFacts(paths);
  EXPECT_EQ(facts.hostname(), "lab-7");
  EXPECT_EQ(facts.kernel_release(), "6.16.0-rc1+");
  EXPECT_EQ(facts.kernel_version(), "#12 SMP PREEMPT_DYNAMIC");
  EXPECT_EQ(facts.cmdline(), "root=/dev/sda1 mitigations=off");
  EXPECT_EQ(facts.cpu_model(), "Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz");
  EXPECT_EQ(facts.cpus(), 96u);
  EXPECT_EQ(facts.mem_bytes(), 16303496ull * 1024);
}

TEST(HostFactsTest, ArmStyleCpuinfoAndMissingFilesLeaveBlanks) {
  testing::TempDir tmp;
  SystemPaths paths = testing::FakePaths(tmp.path());
  testing::WriteFile(paths.procfs + "/cpuinfo",
                     "processor : 0\nCPU part : 0xd0c\n"
                     "Hardware : Ampere Altra\n");
  v1::HostFacts facts = ReadHostFacts(paths);
  EXPECT_EQ(facts.cpu_model(), "Ampere Altra");
  EXPECT_EQ(facts.hostname(), "");
  EXPECT_EQ(facts.cpus(), 0u);
  EXPECT_EQ(facts.mem_bytes(), 0u);
}

TEST(HostFactsTest, RealHostLooksSane) {
  v1::HostFacts facts = ReadHostFacts();
  EXPECT_FALSE(facts.hostname().empty());
  EXPECT_FALSE(facts.kernel_release().empty());
  EXPECT_GE(facts.cpus(), 1u);
  EXPECT_GT(facts.mem_bytes(), 0u);
}

}  // namespace
}  // namespace blkbench
