// The HTML plots' ticks: round steps that cover the data, log axes that end on a tick,
// labels that say exactly the tick's value. No browser needed.
#include "common/plot_axis.h"

#include <cmath>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace blkbench::plot {
namespace {

using ::testing::ElementsAre;

std::vector<std::string> CountLabels(const Ticks& t) {
  std::vector<std::string> out;
  for (double v : t.values) out.push_back(CountTick(v, t));
  return out;
}

std::vector<std::string> DurationLabels(const Ticks& t) {
  std::vector<std::string> out;
  for (double v : t.values) out.push_back(DurationTick(v, t));
  return out;
}

// The axis: 0 to 93.5k used to be ticked at max/4.
TEST(PlotAxis, LinearTicksAreRoundAndCoverTheData) {
  const Ticks t = LinearTicks(0, 93'468);
  EXPECT_EQ(t.step, 20'000);
  EXPECT_THAT(CountLabels(t), ElementsAre("0", "20k", "40k", "60k", "80k", "100k"));
  EXPECT_LE(t.lo, 0);
  EXPECT_GE(t.hi, 93'468);
  for (double lo : {0.0, -3.7, 0.013, 1e6}) {
    for (double span : {1e-3, 0.42, 7.0, 93'468.0, 3.3e9}) {
      const Ticks r = LinearTicks(lo, lo + span);
      EXPECT_TRUE(IsNiceNumber(r.step)) << lo << " " << span << " step " << r.step;
      const double slack = 1e-9 * span;  // lo on a tick may print a hair above it
      EXPECT_LE(r.lo, lo + slack);
      EXPECT_GE(r.hi, lo + span - slack);
      EXPECT_LE(r.values.size(), 10u) << lo << " " << span;
      EXPECT_GE(r.values.size(), 3u) << lo << " " << span;
      for (double v : r.values) EXPECT_NEAR(v / r.step, std::round(v / r.step), 1e-6) << v;
    }
  }
}

TEST(PlotAxis, NeighbouringLabelsNeverPrintAlike) {
  EXPECT_THAT(CountLabels(LinearTicks(1000, 1010)),
              ElementsAre("1k", "1.002k", "1.004k", "1.006k", "1.008k", "1.01k"));
  EXPECT_THAT(CountLabels(LinearTicks(0, 1)), ElementsAre("0", "0.2", "0.4", "0.6", "0.8", "1"));
  EXPECT_THAT(CountLabels(LinearTicks(0, 1.2e6)),
              ElementsAre("0", "200k", "400k", "600k", "800k", "1M", "1.2M"));
  EXPECT_THAT(DurationLabels(LinearTicks(0, 2'500'000)),
              ElementsAre("0", "500 \u00b5s", "1 ms", "1.5 ms", "2 ms", "2.5 ms"));
}

TEST(PlotAxis, OneValueGetsADomainAroundIt) {
  const Ticks zero = LinearTicks(0, 0);
  EXPECT_EQ(zero.lo, 0);
  EXPECT_GT(zero.hi, 0);
  const Ticks one = LinearTicks(100, 100);
  EXPECT_LT(one.lo, 100);
  EXPECT_GT(one.hi, 100);
}

TEST(PlotAxis, LogTicksEndOnATickAndAreLabelledExactly) {
  // 80 µs .. 12 ms: three decades, ticked at 1, 2, 5; the top is a tick, not clipped.
  const Ticks t = LogTicks(80e3, 12e6);
  EXPECT_TRUE(t.log);
  EXPECT_EQ(t.lo, 50e3);
  EXPECT_EQ(t.hi, 20e6);
  EXPECT_THAT(DurationLabels(t),
              ElementsAre("50 \u00b5s", "100 \u00b5s", "200 \u00b5s", "500 \u00b5s", "1 ms", "2 ms",
                          "5 ms", "10 ms", "20 ms"));
  EXPECT_DOUBLE_EQ(Fraction(t, t.lo), 0);
  EXPECT_DOUBLE_EQ(Fraction(t, t.hi), 1);
  EXPECT_NEAR(Fraction(t, 1e6),
              (std::log10(1e6) - std::log10(50e3)) / (std::log10(20e6) - std::log10(50e3)), 1e-12);
  // Many decades: decade ticks only, at most eight of them.
  const Ticks wide = LogTicks(3, 4e9);
  EXPECT_EQ(wide.lo, 1);
  EXPECT_GE(wide.hi, 4e9);
  EXPECT_LE(wide.values.size(), 9u);
  for (double v : wide.values) EXPECT_TRUE(IsNiceNumber(v)) << v;
  // Inside one 1-2-5 step: the two neighbouring ticks.
  const Ticks narrow = LogTicks(120, 180);
  EXPECT_THAT(CountLabels(narrow), ElementsAre("100", "200"));
}

TEST(PlotAxis, NiceNumbersAreOneTwoFiveTimesAPowerOfTen) {
  for (double v : {1.0, 2.0, 5.0, 0.05, 20'000.0, 1e-7, 5e9}) EXPECT_TRUE(IsNiceNumber(v)) << v;
  for (double v : {0.0, -1.0, 3.0, 23'400.0, 0.25, 7e6}) EXPECT_FALSE(IsNiceNumber(v)) << v;
}

}  // namespace
}  // namespace blkbench::plot
