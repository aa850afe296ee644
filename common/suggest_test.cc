// Tests for the edit distance behind "did you mean ...?".
#include "common/suggest.h"

#include <string_view>
#include <vector>

#include "gtest/gtest.h"

namespace blkbench {
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
  // A few of fio's job options (workloads/job_options.h), the first users of this.
  const std::vector<std::string_view> keys = {"bs",      "iodepth",   "ioengine",  "numjobs",
                                              "rw",      "rwmix",     "rwmixread", "rwmixwrite",
                                              "runtime", "scheduler", "size",      "direct"};
  EXPECT_EQ(ClosestMatch("iodeth", keys), "iodepth");
  EXPECT_EQ(ClosestMatch("sheduler", keys), "scheduler");
  EXPECT_EQ(ClosestMatch("numjob", keys), "numjobs");
  EXPECT_EQ(ClosestMatch("rwmixred", keys), "rwmixread");
  EXPECT_EQ(ClosestMatch("completely_different", keys), "");
  EXPECT_EQ(ClosestMatch("zz", keys), "");
}

TEST(DidYouMeanTest, NamesTheClosestOrNothing) {
  const std::vector<std::string_view> keys = {"name", "vcpus", "memory_mb"};
  EXPECT_EQ(DidYouMean("vcpu", keys), " (did you mean 'vcpus'?)");
  EXPECT_EQ(DidYouMean("colour", keys), "");
}

}  // namespace
}  // namespace blkbench
