// E-divisive: finds planted shifts at the right index, and none in flat noise.
#include "controller/gate/change_point.h"

#include <vector>

#include "controller/gate/rng.h"
#include "gtest/gtest.h"

namespace blkbench::gate {
namespace {

std::vector<double> Series(uint64_t seed, const std::vector<std::pair<size_t, double>>& pieces) {
  Rng rng(seed);
  std::vector<double> s;
  for (const auto& [len, mean] : pieces) {
    for (size_t i = 0; i < len; ++i) s.push_back(mean + rng.Gaussian());
  }
  return s;
}

TEST(EDivisive, FindsSingleShift) {
  const std::vector<double> s = Series(3, {{40, 100.0}, {40, 103.0}});
  const std::vector<ChangePoint> cps = EDivisive(s, {});
  ASSERT_EQ(cps.size(), 1u);
  EXPECT_NEAR(static_cast<double>(cps[0].index), 40.0, 2.0);
  EXPECT_LT(cps[0].p_value, 0.05);
  EXPECT_GT(cps[0].statistic, 0.0);
}

TEST(EDivisive, FindsTwoShiftsByBisection) {
  const std::vector<double> s = Series(4, {{30, 100.0}, {30, 104.0}, {30, 99.0}});
  const std::vector<ChangePoint> cps = EDivisive(s, {});
  ASSERT_EQ(cps.size(), 2u);
  EXPECT_NEAR(static_cast<double>(cps[0].index), 30.0, 2.0);
  EXPECT_NEAR(static_cast<double>(cps[1].index), 60.0, 2.0);
}

TEST(EDivisive, FlatSeriesHasNoChangePoints) {
  EXPECT_TRUE(EDivisive(Series(5, {{80, 100.0}}), {}).empty());
  EXPECT_TRUE(EDivisive(std::vector<double>(30, 7.0), {}).empty());
  // Over many flat series the permutation test keeps its level (~5 % per segment).
  int flagged = 0;
  for (uint64_t seed = 0; seed < 40; ++seed) {
    flagged += EDivisive(Series(100 + seed, {{40, 0.0}}), {}).empty() ? 0 : 1;
  }
  EXPECT_LE(flagged, 6);
}

TEST(EDivisive, DeterministicAndRespectsMinSegment) {
  const std::vector<double> s = Series(6, {{40, 0.0}, {40, 2.0}});
  EDivisiveOptions opts;
  opts.seed = 11;
  const std::vector<ChangePoint> a = EDivisive(s, opts);
  const std::vector<ChangePoint> b = EDivisive(s, opts);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i].p_value, b[i].p_value);
  // A shift in the last 3 points cannot be reported with min_segment 5.
  const std::vector<double> late = Series(7, {{30, 0.0}, {3, 10.0}});
  for (const ChangePoint& cp : EDivisive(late, {})) {
    EXPECT_GE(cp.index, 5u);
    EXPECT_LE(cp.index, late.size() - 5);
  }
  EXPECT_TRUE(EDivisive({1, 2, 3}, {}).empty());
}

}  // namespace
}  // namespace blkbench::gate
