// The argument helpers the command files share: ids, the matrix check, times.
#include "cli/command_args.h"

#include <fstream>
#include <sstream>
#include <string>

#include "common/testing/loop_device.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "workloads/matrix.h"

namespace blkbench {
namespace {

using ::testing::HasSubstr;

Args WithPositional(std::vector<std::string> positional) {
  Args a;
  a.positional = std::move(positional);
  return a;
}

TEST(CommandArgsTest, AnIdIsAPositiveNumber) {
  std::ostringstream err;
  uint64_t id = 0;
  EXPECT_TRUE(ParseId(WithPositional({"show", "42"}), &id, err));
  EXPECT_EQ(id, 42u);
  EXPECT_EQ(err.str(), "");
  for (const char* bad : {"0", "x", "-3", ""}) {
    std::ostringstream e;
    EXPECT_FALSE(ParseId(WithPositional({"show", bad}), &id, e)) << bad;
    EXPECT_EQ(e.str(),
              "blkbench: show: expected an experiment id (a number from 'blkbench list')\n");
  }
  std::ostringstream missing;
  EXPECT_EQ(CheckId(WithPositional({"cancel"}), missing), 2);
  EXPECT_EQ(CheckId(WithPositional({"cancel", "7"}), missing), 0);
}

TEST(CommandArgsTest, CheckMatrixLoadsTheTextAndItsParseOnce) {
  testing::TempDir dir("command_args_test");
  const std::string path = dir.File("m.yaml");
  const std::string text =
      "name: m\njob: {rw: randread, bs: 4k, runtime: 10ms, time_based: 1}\n"
      "matrix:\n  iodepth: [1, 2]\ntarget: {device_class: sim:null_blk}\n";
  std::ofstream(path) << text;
  Args a = WithPositional({"validate", path});
  std::ostringstream err;
  ASSERT_EQ(CheckMatrix(a, err), 0) << err.str();
  EXPECT_EQ(a.matrix_text, text);
  ASSERT_NE(a.matrix, nullptr);
  EXPECT_EQ(a.matrix->cells.size(), 2u);
  EXPECT_EQ(a.matrix->name, "m");
}

TEST(CommandArgsTest, CheckMatrixFailsWithThePlaceOfTheMistake) {
  testing::TempDir dir("command_args_test");
  const std::string path = dir.File("bad.yaml");
  std::ofstream(path) << "name: m\njob:\n  rw: randread\n  iodeth: 32\n"
                         "target: {device_class: sim:null_blk}\n";
  Args a = WithPositional({"sim", path});
  std::ostringstream err;
  EXPECT_EQ(CheckMatrix(a, err), 1);
  EXPECT_THAT(err.str(), HasSubstr(path + ":4:"));
  EXPECT_EQ(a.matrix, nullptr);
  Args missing = WithPositional({"sim", dir.File("none.yaml")});
  std::ostringstream err2;
  EXPECT_EQ(CheckMatrix(missing, err2), 1);
  EXPECT_THAT(err2.str(), HasSubstr("none.yaml"));
}

TEST(CommandArgsTest, TimesAreUtcIsoOrEmpty) {
  EXPECT_EQ(IsoTime(0), "");
  EXPECT_EQ(IsoTime(-5), "");
  EXPECT_EQ(IsoTime(1'700'000'000'000), "2023-11-14T22:13:20Z");
}

TEST(CommandArgsTest, SharedFlagsAreDeclaredOnce) {
  EXPECT_EQ(FormatTableFlag().name, "format");
  EXPECT_EQ(FormatTableFlag().choices, (std::vector<std::string>{"table", "json", "csv"}));
  EXPECT_EQ(LocalDbFlag().name, "db");
  EXPECT_EQ(LocalDbFlag().value, "FILE");
}

}  // namespace
}  // namespace blkbench
