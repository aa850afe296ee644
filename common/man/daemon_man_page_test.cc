// DaemonManPage: every flag with its help and default, text escaped, and roff that groff
// reads without a warning. (That a daemon's page lists what its --help lists is checked on
// the packaged binaries: tests/deb_lintian_test.sh.)
#include "common/man/daemon_man_page.h"

#include <fstream>
#include <string>

#include "absl/flags/flag.h"
#include "common/testing/command.h"
#include "common/testing/loop_device.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

ABSL_FLAG(int64_t, test_interval_ms, 250, "how often -- in ms -- to look");
ABSL_FLAG(std::string, test_listen, "", "address to serve on, '' for none");
ABSL_FLAG(bool, test_switch, false, ".starts with a dot");

namespace blkbench {
namespace {

using ::testing::HasSubstr;

DaemonManInfo Info() {
  return {.program = "blkbench-test",
          .summary = "a daemon for the test",
          .synopsis = {"blkbench-test [--test_listen ADDR]", "blkbench-test migrate"},
          .description = {"First paragraph.", "Second, with a back\\slash."},
          .files = {{"/etc/blkbench/test.yaml", "its configuration"}},
          .see_also = {"blkbench(1)", "blkbench-agent(8)"}};
}

TEST(DaemonManPageTest, ListsOurFlagsWithHelpAndDefaults) {
  const std::string page = DaemonManPage(Info(), "0.2.0 (abc)");
  EXPECT_THAT(page, HasSubstr(".TH BLKBENCH\\-TEST 8 \"\" \"blkbench 0.2.0 (abc)\""));
  EXPECT_THAT(page, HasSubstr(".B \\-\\-test_interval_ms \\fIN\\fR\nhow often \\-\\- in ms \\-\\- "
                              "to look (default: 250)\n"));
  EXPECT_THAT(page, HasSubstr(".B \\-\\-test_listen \\fISTRING\\fR\naddress to serve on, '' for "
                              "none (default: '')\n"));
  // A help text starting with a dot is not a roff request.
  EXPECT_THAT(page, HasSubstr(".B \\-\\-test_switch\n\\&.starts with a dot (default: false)\n"));
  EXPECT_THAT(page, HasSubstr(".B \\-\\-man\n"));
  EXPECT_THAT(page, HasSubstr("Second, with a back\\eslash."));
  EXPECT_THAT(page, HasSubstr(".I /etc/blkbench/test.yaml\nits configuration\n"));
  EXPECT_THAT(page, HasSubstr(".BR blkbench (1),\n.BR blkbench\\-agent (8)\n"));
}

TEST(DaemonManPageTest, GroffReadsItWithoutWarnings) {
  if (!testing::HaveCommand("groff")) GTEST_SKIP() << "groff is absent (scripts/deps.sh)";
  testing::TempDir dir("daemon_man_page_test");
  std::ofstream(dir.File("blkbench-test.8")) << DaemonManPage(Info(), "0.2.0");
  std::string why;
  EXPECT_EQ(testing::RunCommand("groff -man -Tutf8 -ww -z " + dir.File("blkbench-test.8") + " 2>&1",
                                &why),
            0);
  EXPECT_EQ(why, "") << "groff warnings";
}

}  // namespace
}  // namespace blkbench
