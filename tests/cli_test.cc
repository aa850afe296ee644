// CLI behaviour a new user meets first: validate's output and errors, usage errors, and
// a clear message with exit code 3 when the controller cannot be reached.
#include "controller/cli/cli.h"

#include <fstream>
#include <sstream>

#include "common/testing/loop_device.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace blkbench {
namespace {

using ::testing::HasSubstr;

int Cli(std::vector<std::string> args, std::string* out, std::string* err) {
  std::ostringstream o, e;
  const int rc = RunCli(args, o, e);
  *out = o.str();
  *err = e.str();
  return rc;
}

TEST(CliTest, ValidatePrintsCellsOfTheQuickstart) {
  std::string out, err;
  const std::string src = std::string(BLKBENCH_SOURCE_DIR) + "/examples/quickstart.yaml";
  ASSERT_EQ(Cli({"validate", src}, &out, &err), 0) << err;
  EXPECT_THAT(out, HasSubstr("8 cells x 1 repeat = 8 runs"));
}

TEST(CliTest, ValidateNamesTheLineOfATypo) {
  testing::TempDir dir("cli_test");
  const std::string path = dir.File("typo.yaml");
  std::ofstream(path)
      << "name: t\njob:\n  rw: randread\n  iodeth: 32\ntarget: {device_class: ssd}\n";
  std::string out, err;
  EXPECT_EQ(Cli({"validate", path}, &out, &err), 1);
  EXPECT_THAT(err, HasSubstr(path + ":4:3"));
  EXPECT_THAT(err, HasSubstr("iodepth"));
}

TEST(CliTest, SubmitOfBadFileFailsBeforeDialling) {
  testing::TempDir dir("cli_test");
  const std::string path = dir.File("bad.yaml");
  std::ofstream(path) << "name: t\njob: {bs: 4000}\ntarget: {device_class: ssd}\n";
  std::string out, err;
  EXPECT_EQ(Cli({"--controller", "127.0.0.1:1", "submit", path}, &out, &err), 1);
  EXPECT_THAT(err, HasSubstr(path + ":2"));
  EXPECT_THAT(err, HasSubstr("512"));
}

TEST(CliTest, UnreachableControllerIsAClearError) {
  std::string out, err;
  EXPECT_EQ(Cli({"--controller", "127.0.0.1:1", "list"}, &out, &err), 3);
  EXPECT_THAT(err, HasSubstr("cannot reach the controller at 127.0.0.1:1"));
}

TEST(CliTest, SimRunsAMatrixOnTheEngineAndStoresIt) {
  testing::TempDir dir("cli_test");
  const std::string path = dir.File("sim.yaml");
  std::ofstream(path) << "name: s\njob: {rw: randread, bs: 4k, ioengine: io_uring, "
                         "runtime: 10ms, time_based: 1}\nmatrix:\n  iodepth: [1, 8]\n"
                         "target: {device_class: sim:null_blk}\n";
  std::string out, err;
  ASSERT_EQ(Cli({"sim", path, "--db", dir.File("sim.db"), "--trace", dir.File("trace.txt"),
                 "--format", "csv"},
                &out, &err),
            0)
      << err;
  // blkparse-style D and C events, one D and one C per request.
  const std::string trace = testing::ReadFileOr(dir.File("trace.txt"));
  EXPECT_THAT(trace, HasSubstr("# run 1 iodepth=1 rep 0"));
  EXPECT_THAT(trace, ::testing::ContainsRegex(" D +R [0-9]+ \\+ 8 "));
  EXPECT_THAT(trace, ::testing::ContainsRegex(" C +R [0-9]+ \\+ 8 "));
  EXPECT_THAT(out, HasSubstr("[2/2] iodepth=8 rep 0"));
  EXPECT_THAT(out, HasSubstr("stored as experiment 1"));
  EXPECT_THAT(out, HasSubstr("run,cell,axes"));
  EXPECT_EQ(testing::RunCommand(
                "sqlite3 " + dir.File("sim.db") + " \"SELECT COUNT(*) FROM results\"", &out),
            0);
  EXPECT_EQ(out, "2");
}

TEST(CliTest, SimRefusesRealDeviceClasses) {
  std::string out, err;
  const std::string src = std::string(BLKBENCH_SOURCE_DIR) + "/examples/quickstart.yaml";
  EXPECT_EQ(Cli({"sim", src}, &out, &err), 1);
  EXPECT_THAT(err, HasSubstr("blkbench sim runs only simulated classes"));
}

TEST(CliTest, UsageErrors) {
  std::string out, err;
  EXPECT_EQ(Cli({}, &out, &err), 2);
  EXPECT_THAT(err, HasSubstr("usage: blkbench"));
  EXPECT_EQ(Cli({"frobnicate"}, &out, &err), 2);
  EXPECT_THAT(err, HasSubstr("unknown command 'frobnicate'"));
  EXPECT_EQ(Cli({"results", "--format", "xml", "1"}, &out, &err), 2);
  EXPECT_EQ(Cli({"--bogus", "list"}, &out, &err), 2);
  EXPECT_THAT(err, HasSubstr("unknown option '--bogus'"));
  EXPECT_EQ(Cli({"show", "abc"}, &out, &err), 2);
  EXPECT_THAT(err, HasSubstr("expected an experiment id"));
}

}  // namespace
}  // namespace blkbench
