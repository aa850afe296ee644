// Tests for virtual CPU accounting.
#include "engine/sim/cpu.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace blkbench::engine {
namespace {

TEST(CpuTest, RunSerialisesWorkOnOneCpu) {
  VirtualCpu cpu(0);
  EXPECT_EQ(cpu.Run(100, Stage::kSubmit, 50), 150u);
  EXPECT_EQ(cpu.Run(120, Stage::kDispatch, 30), 180u);  // waits for the first piece
  EXPECT_EQ(cpu.Run(500, Stage::kSubmit, 10), 510u);
  EXPECT_EQ(cpu.busy_ns(Stage::kSubmit), 60u);
  EXPECT_EQ(cpu.busy_ns(Stage::kDispatch), 30u);
  EXPECT_EQ(cpu.total_busy_ns(), 90u);
}

TEST(CpuTest, CpuSetTotalsAndReport) {
  CpuSet cpus(2);
  cpus[0].Run(0, Stage::kSubmit, 300);
  cpus[1].Run(0, Stage::kSubmit, 100);
  cpus[1].Account(Stage::kLockSpin, 600);
  EXPECT_EQ(cpus.TotalNs(Stage::kSubmit), 400u);
  EXPECT_DOUBLE_EQ(cpus.NsPerIo(Stage::kLockSpin, 4), 150.0);
  EXPECT_DOUBLE_EQ(cpus.NsPerIo(Stage::kLockSpin, 0), 0.0);
  EXPECT_DOUBLE_EQ(cpus.Utilisation(1000), 0.5);
  std::string report = cpus.Report(4);
  EXPECT_THAT(report, ::testing::HasSubstr("lock_spin"));
  EXPECT_THAT(report, ::testing::HasSubstr("60.0%"));
  EXPECT_THAT(report, ::testing::Not(::testing::HasSubstr("dispatch")));
}

}  // namespace
}  // namespace blkbench::engine
