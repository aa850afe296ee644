// Tests for the edit distance behind "did you mean ...?".
#include "workloads/suggest.h"

#include <string_view>
#include <vector>

#include "gtest/gtest.h"
#include "workloads/job_options.h"

namespace blkbench::workloads {
namespace {

TEST(EditDistanceTest, Basics) {
  EXPECT_EQ(EditDistance("", ""), 0u);
  EXPECT_EQ(EditDistance("abc", ""), 3u);
  EXPECT_EQ(EditDistance("iodepth", "iodepth"), 0u);
  EXPECT_EQ(EditDistance("iodeth", "iodepth"), 1u);   // deletion
  EXPECT_EQ(EditDistance("iodpeth", "iodepth"), 1u);  // transposition
  EXPECT_EQ(EditDistance("kitten", "sitting"), 3u);
}

TEST(ClosestMatchTest, SuggestsTyposOnly) {
  const std::vector<std::string_view> keys = OptionNames(Scope::kJob);
  EXPECT_EQ(ClosestMatch("iodeth", keys), "iodepth");
  EXPECT_EQ(ClosestMatch("sheduler", keys), "scheduler");
  EXPECT_EQ(ClosestMatch("numjob", keys), "numjobs");
  EXPECT_EQ(ClosestMatch("rwmixred", keys), "rwmixread");
  EXPECT_EQ(ClosestMatch("completely_different", keys), "");
  EXPECT_EQ(ClosestMatch("zz", keys), "");
}

}  // namespace
}  // namespace blkbench::workloads
