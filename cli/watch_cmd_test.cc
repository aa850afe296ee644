// Tests for the watch ETA (wall time from the rate runs end at, moving with the clock),
// the Records renderer and the command-table parser's corner cases.
#include "cli/watch_cmd.h"

#include "cli/commands.h"
#include "cli/format.h"
#include "gtest/gtest.h"

namespace blkbench {
namespace {

TEST(EtaTest, WallTimeFromTheRateRunsEndAtAndItMoves) {
  const absl::Time start = absl::FromUnixSeconds(1000);
  EtaEstimator eta(start);
  // Nothing ended yet, 2 of 10 running, 30 s per run: five waves.
  EXPECT_EQ(eta.Eta(start, 0, 2, 10, 30'000), "~2m30s");
  // The estimate counts down with the clock while nothing ends...
  EXPECT_EQ(eta.Eta(start + absl::Seconds(60), 0, 2, 10, 30'000), "~1m30s");
  // ...then follows the observed rate: 4 ended in 40 s, 6 left = 60 s.
  EXPECT_EQ(eta.Eta(start + absl::Seconds(40), 4, 2, 10, 30'000), "~1m00s");
  // Simulated runs finish far faster than their configured runtime: the rate wins.
  EXPECT_EQ(eta.Eta(start + absl::Seconds(2), 8, 2, 10, 30'000), "~1s");
  EXPECT_EQ(eta.Eta(start + absl::Seconds(2), 10, 0, 10, 30'000), "");
}

TEST(EtaTest, RunsEndedBeforeTheWatchDoNotCountAsItsRate) {
  const absl::Time start = absl::FromUnixSeconds(1000);
  EtaEstimator eta(start);
  EXPECT_EQ(eta.Eta(start, 50, 1, 100, 10'000), "~8m20s");  // configured time, one at a time
  EXPECT_EQ(eta.Eta(start + absl::Seconds(10), 51, 1, 100, 10'000), "~8m10s");  // 49 x 10 s
}

TEST(RecordsTest, JsonKeepsNumbersAndNullsAndCsvQuotes) {
  Records r({"id", "name", "missing"});
  r.Add({NumberValue(3), TextValue("a \"b\", c"), {}});
  EXPECT_EQ(r.Render("json"),
            "[\n {\"id\": 3, \"name\": \"a \\\"b\\\", c\", \"missing\": null}\n]\n");
  EXPECT_EQ(r.Render("csv"), "id,name,missing\n3,\"a \"\"b\"\", c\",\n");
  EXPECT_EQ(Records({"x"}).Render("json"), "[]\n");
  EXPECT_NE(r.Render("table").find('-'), std::string::npos);  // missing shows as -
}

std::vector<CommandSpec> Table() {
  auto run = [](const Args&, Client*, std::ostream&, std::ostream&) { return 0; };
  return {{"results",
           {"EXP"},
           "per-run results",
           "",
           {{"format", "F", "", {"json", "csv"}}, {"samples", "", ""}},
           true,
           nullptr,
           run},
          {"help", {"[COMMAND]"}, "help", "", {}, false, nullptr, run}};
}

TEST(CommandsTest, ParsesFlagsAnywhereAndChecksCounts) {
  auto a = ParseCommandLine({"--controller", "h:1", "results", "--format=json", "7", "--samples"},
                            Table());
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->controller, "h:1");
  EXPECT_EQ(a->positional, (std::vector<std::string>{"results", "7"}));
  EXPECT_EQ(a->flags.at("format"), "json");
  EXPECT_TRUE(ParseCommandLine({"help"}, Table()).ok());
  EXPECT_TRUE(ParseCommandLine({"help", "results"}, Table()).ok());
  EXPECT_FALSE(ParseCommandLine({"help", "a", "b"}, Table()).ok());
  EXPECT_FALSE(ParseCommandLine({"results"}, Table()).ok());
  EXPECT_TRUE(ParseCommandLine({"results", "--help"}, Table()).ok());  // help skips counts
  EXPECT_FALSE(ParseCommandLine({"results", "7", "--samples=1"}, Table()).ok());
  EXPECT_FALSE(ParseCommandLine({"results", "7", "--format"}, Table()).ok());
  // After "--" everything is positional.
  auto dash = ParseCommandLine({"results", "--", "--7"}, Table());
  ASSERT_TRUE(dash.ok());
  EXPECT_EQ(dash->positional[1], "--7");
  EXPECT_EQ(Synopsis(Table()[0]), "blkbench results EXP [--format json|csv] [--samples]");
}

}  // namespace
}  // namespace blkbench
