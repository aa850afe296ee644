// RunSim on the engine: only simulated classes, the engine's internals after the results
// table, and the caller's command name in its messages.
#include "cli/sim.h"

#include <memory>
#include <sstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "workloads/matrix.h"

namespace blkbench {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::shared_ptr<const workloads::Matrix> MatrixOn(const std::string& device_class) {
  auto m = workloads::ParseMatrix(
      "name: e\njob: {rw: randread, bs: 4k, runtime: 5ms, time_based: 1}\n"
      "matrix:\n  iodepth: [1, 4]\ntarget: {device_class: " +
          device_class + "}\n",
      "e.yaml");
  EXPECT_TRUE(m.ok()) << m.status();
  return std::make_shared<const workloads::Matrix>(*std::move(m));
}

TEST(SimTest, RunsEveryCellOnTheEngineAndShowsItsInternals) {
  std::ostringstream out, err;
  v1::GetResultsResponse seen;
  ASSERT_EQ(RunSim({.path = "e.yaml",
                    .matrix = MatrixOn("sim:null_blk"),
                    .on_results = [&seen](const v1::GetResultsResponse& r) { seen = r; }},
                   out, err),
            0)
      << err.str();
  EXPECT_THAT(err.str(), HasSubstr("[2/2] "));
  EXPECT_THAT(out.str(), HasSubstr("engine internals (per I/O unless noted)"));
  ASSERT_EQ(seen.rows_size(), 2);
  for (const v1::ResultRow& row : seen.rows()) {
    EXPECT_EQ(row.run().state(), v1::RUN_DONE);
    EXPECT_EQ(row.run().device_path(), "sim:null_blk");
    EXPECT_GT(row.run().result().iops(), 0);
  }
}

TEST(SimTest, OtherFormatsCarryOnlyTheResults) {
  std::ostringstream out, err;
  ASSERT_EQ(
      RunSim({.path = "e.yaml", .format = "csv", .quiet = true, .matrix = MatrixOn("sim:ssd")}, out,
             err),
      0)
      << err.str();
  EXPECT_EQ(err.str(), "");
  EXPECT_THAT(out.str(), Not(HasSubstr("engine internals")));
  EXPECT_THAT(out.str(), HasSubstr("iops"));
}

TEST(SimTest, ARealDeviceClassIsRefusedBeforeAnythingRuns) {
  std::ostringstream out, err;
  EXPECT_EQ(RunSim({.path = "e.yaml", .matrix = MatrixOn("nvme")}, out, err), 1);
  EXPECT_THAT(err.str(), HasSubstr("e.yaml: cell 0 ("));
  EXPECT_THAT(err.str(), HasSubstr("has device_class 'nvme'; blkbench sim runs only simulated"));
  EXPECT_EQ(out.str(), "");
}

TEST(SimTest, MessagesNameTheCallersCommand) {
  std::ostringstream out, err;
  EXPECT_EQ(RunSim({.command = "bisect",
                    .path = "e.yaml",
                    .trace_path = "/nonexistent-dir/t.txt",
                    .matrix = MatrixOn("sim:null_blk")},
                   out, err),
            1);
  EXPECT_EQ(err.str(), "blkbench bisect: cannot write '/nonexistent-dir/t.txt'\n");
}

}  // namespace
}  // namespace blkbench
