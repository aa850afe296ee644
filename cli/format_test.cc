// Tests for the CLI's text formatting.
#include "cli/format.h"

#include "gtest/gtest.h"

namespace blkbench {
namespace {

TEST(FormatTest, Units) {
  EXPECT_EQ(FormatIops(212400), "212.4k");
  EXPECT_EQ(FormatIops(2'500'000), "2.50M");
  EXPECT_EQ(FormatIops(950), "950");
  EXPECT_EQ(FormatBandwidth(830.0 * 1024 * 1024), "830.0 MiB/s");
  EXPECT_EQ(FormatLatency(12'345), "12.3us");
  EXPECT_EQ(FormatLatency(4'100'000), "4.10ms");
  EXPECT_EQ(FormatLatency(800), "800ns");
  EXPECT_EQ(FormatDuration(65'000), "1m05s");
  EXPECT_EQ(FormatDuration(999), "1s");
  EXPECT_EQ(ProgressBar(1, 4, 8), "[##......]");
  EXPECT_EQ(RunStateName(v1::RUN_RUNNING), "running");
  EXPECT_EQ(ExperimentStateName(v1::EXPERIMENT_DONE), "done");
}

TEST(FormatTest, TableAlignsAndQuotesCsv) {
  TextTable t({"name", "iops"});
  t.AddRow({"a", "5"});
  t.AddRow({"long,name", "12345"});
  EXPECT_EQ(t.ToString(), "name       iops\na              5\nlong,name  12345\n");
  EXPECT_EQ(t.ToCsv(), "name,iops\na,5\n\"long,name\",12345\n");
}

}  // namespace
}  // namespace blkbench
