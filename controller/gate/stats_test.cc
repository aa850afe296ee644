// Known-value tests for robust.h, distributions.h, rank_sum.h, hodges_lehmann.h, fdr.h.
#include <cmath>
#include <numeric>
#include <vector>

#include "controller/gate/distributions.h"
#include "controller/gate/fdr.h"
#include "controller/gate/hodges_lehmann.h"
#include "controller/gate/rank_sum.h"
#include "controller/gate/rng.h"
#include "controller/gate/robust.h"
#include "gtest/gtest.h"

namespace blkbench::gate {
namespace {

TEST(Robust, LocationAndSpread) {
  const std::vector<double> x = {5, 1, 4, 2, 3, 100};
  EXPECT_DOUBLE_EQ(Median(x), 3.5);
  EXPECT_DOUBLE_EQ(Median({3, 1, 2}), 2.0);
  EXPECT_DOUBLE_EQ(Mean({1, 2, 3, 4}), 2.5);
  EXPECT_NEAR(StdDev({2, 4, 4, 4, 5, 5, 7, 9}), 2.138089935, 1e-9);
  EXPECT_DOUBLE_EQ(Quantile({1, 2, 3, 4, 5}, 0.25), 2.0);
  EXPECT_DOUBLE_EQ(Quantile({1, 2, 3, 4}, 0.5), 2.5);
  EXPECT_DOUBLE_EQ(TrimmedMean(x, 1), 3.5);  // drops 1 and 100
  EXPECT_DOUBLE_EQ(TrimmedMean({1, 2, 3}, 5), 2.0);
  EXPECT_EQ(LkpTrim(31), 0u);
  EXPECT_EQ(LkpTrim(64), 2u);
  // |x - 3.5| = 1.5 2.5 0.5 1.5 0.5 96.5 -> median 1.5; the outlier does not move it.
  EXPECT_DOUBLE_EQ(Mad(x), 1.5);
  EXPECT_NEAR(Cv({90, 100, 110}), 0.1, 1e-12);
  EXPECT_TRUE(std::isnan(Median({})));
  EXPECT_TRUE(std::isnan(Cv({})));
}

TEST(Distributions, Normal) {
  EXPECT_NEAR(NormalCdf(1.96), 0.9750021048517795, 1e-14);
  EXPECT_NEAR(NormalUpperTail(5.0), 2.866515718791939e-07, 1e-20);
  EXPECT_NEAR(NormalQuantile(0.975), 1.959963984540054, 1e-12);
  EXPECT_NEAR(NormalQuantile(0.05), -1.644853626951472, 1e-12);
  EXPECT_NEAR(NormalQuantile(0.8), 0.8416212335729143, 1e-12);
}

TEST(Distributions, MannWhitneyExactNull) {
  // m = n = 3: 20 equally likely arrangements, one with U = 0.
  const std::vector<double> p33 = MannWhitneyNullPmf(3, 3);
  ASSERT_EQ(p33.size(), 10u);
  EXPECT_NEAR(p33[0], 1.0 / 20, 1e-15);
  EXPECT_NEAR(p33[4], 3.0 / 20, 1e-15);  // counts 1 1 2 3 3 3 3 2 1 1
  // m = n = 5: cumulative counts 1 2 4 7 12 of C(10,5) = 252.
  const std::vector<double> p55 = MannWhitneyNullPmf(5, 5);
  EXPECT_NEAR(p55[0] + p55[1] + p55[2], 4.0 / 252, 1e-15);
  EXPECT_NEAR(std::accumulate(p55.begin(), p55.end(), 0.0), 1.0, 1e-12);
  for (size_t u = 0; u < p55.size(); ++u) EXPECT_NEAR(p55[u], p55[p55.size() - 1 - u], 1e-15);
  // Unequal sizes: P(U = 0) = 1 / C(m + n, m).
  EXPECT_NEAR(MannWhitneyNullPmf(4, 7)[0], 1.0 / 330, 1e-15);

  double achieved = 0;
  EXPECT_EQ(MannWhitneyLowerCritical(3, 3, 0.05, &achieved), 0);
  EXPECT_NEAR(achieved, 0.05, 1e-15);
  EXPECT_EQ(MannWhitneyLowerCritical(3, 3, 0.025), -1);
  EXPECT_EQ(MannWhitneyLowerCritical(5, 5, 0.025, &achieved), 2);
  EXPECT_NEAR(achieved, 4.0 / 252, 1e-15);
  // Published table (two-sided 0.05, m = n = 10): critical value 23.
  EXPECT_EQ(MannWhitneyLowerCritical(10, 10, 0.025), 23);
  // Normal approximation agrees with the exact tail at the boundary of the exact range.
  const int exact = MannWhitneyLowerCritical(50, 50, 0.025);
  const double mu = 1250.0;
  const double sigma = std::sqrt(50.0 * 50.0 * 101.0 / 12.0);
  EXPECT_NEAR(exact, mu - 0.5 - 1.959963984540054 * sigma, 2.0);
}

TEST(RankSum, ScipyDocExampleExact) {
  // scipy.stats.mannwhitneyu docs: U1 = 17, exact two-sided p = 0.11111.
  const RankSumResult r = MannWhitneyTest({19, 22, 16, 29, 24}, {20, 11, 17, 12});
  EXPECT_DOUBLE_EQ(r.u, 17.0);
  EXPECT_TRUE(r.exact);
  EXPECT_NEAR(r.p_value, 0.1111111111111111, 1e-12);
  // Swapping the samples gives the complementary U and the same p.
  const RankSumResult s = MannWhitneyTest({20, 11, 17, 12}, {19, 22, 16, 29, 24});
  EXPECT_DOUBLE_EQ(s.u, 3.0);
  EXPECT_NEAR(s.p_value, r.p_value, 1e-12);
}

TEST(RankSum, HollanderWolfeExample) {
  // R's ?wilcox.test example (Hollander & Wolfe p. 69): W = 35, one-sided p = 0.1272.
  const std::vector<double> x = {0.80, 0.83, 1.89, 1.04, 1.45, 1.38, 1.91, 1.64, 0.73, 1.46};
  const std::vector<double> y = {1.15, 0.88, 0.90, 0.74, 1.21};
  const RankSumResult r = MannWhitneyTest(x, y);
  EXPECT_DOUBLE_EQ(r.u, 35.0);
  EXPECT_NEAR(r.p_value, 2 * 0.1272, 2e-4);
}

TEST(RankSum, SmallestExactPValues) {
  EXPECT_NEAR(MannWhitneyTest({1, 2, 3}, {4, 5, 6}).p_value, 0.1, 1e-12);
  EXPECT_NEAR(MannWhitneyTest({1, 2, 3, 4, 5}, {6, 7, 8, 9, 10}).p_value, 2.0 / 252, 1e-12);
}

TEST(RankSum, MidP) {
  // 3 vs 3 fully separated: p = 2 P(U = 0) = 0.1, mid-p counts half of it.
  const RankSumResult r = MannWhitneyTest({1, 2, 3}, {4, 5, 6});
  EXPECT_NEAR(r.mid_p_value, 0.05, 1e-12);
  // scipy example, 5 vs 4: P(U >= 17) = 7/126 and P(U = 17) = P(U = 3) = 3/126
  // (partitions 3, 2+1, 1+1+1), so mid-p = 2 (7 - 1.5) / 126.
  const RankSumResult s = MannWhitneyTest({19, 22, 16, 29, 24}, {20, 11, 17, 12});
  EXPECT_NEAR(s.mid_p_value, 11.0 / 126, 1e-12);
}

TEST(RankSum, TiesUseCorrectedNormal) {
  // Mid-ranks 1, 3, 3, 5.5 for x: U = 2.5; tie term 24 + 6; sigma^2 = 16/12 (9 - 30/56).
  const RankSumResult r = MannWhitneyTest({1, 2, 2, 3}, {2, 3, 4, 5});
  EXPECT_FALSE(r.exact);
  EXPECT_DOUBLE_EQ(r.u, 2.5);
  EXPECT_NEAR(r.z, -1.4883513944689681, 1e-12);
  EXPECT_NEAR(r.p_value, 0.1366582477381475, 1e-12);
  EXPECT_DOUBLE_EQ(MannWhitneyTest({7, 7, 7}, {7, 7, 7}).p_value, 1.0);
  EXPECT_DOUBLE_EQ(MannWhitneyTest({}, {1.0}).p_value, 1.0);
}

TEST(RankSum, LargeSamplesUseNormal) {
  Rng rng(7);
  std::vector<double> x(60);
  std::vector<double> y(60);
  for (double& v : x) v = rng.Gaussian();
  for (double& v : y) v = rng.Gaussian() + 1.0;
  const RankSumResult r = MannWhitneyTest(x, y);
  EXPECT_FALSE(r.exact);
  EXPECT_LT(r.p_value, 1e-3);
  EXPECT_NEAR(r.p_value, 2 * NormalUpperTail(std::fabs(r.z)), 1e-15);
  EXPECT_LT(r.z, 0.0);  // x tends to be smaller: U below its mean
}

TEST(HodgesLehmann, ShiftAndInterval) {
  // Differences y - x: 1 2 2 3 3 3 4 4 5 -> median 3; 90 % interval [min, max].
  const ShiftEstimate e = HodgesLehmannShift({1, 2, 3}, {4, 5, 6}, 0.90);
  EXPECT_DOUBLE_EQ(e.estimate, 3.0);
  EXPECT_DOUBLE_EQ(e.ci_low, 1.0);
  EXPECT_DOUBLE_EQ(e.ci_high, 5.0);
  EXPECT_NEAR(e.confidence, 0.9, 1e-12);
  // 3 vs 3 cannot support 95 %: the interval is unbounded.
  const ShiftEstimate wide = HodgesLehmannShift({1, 2, 3}, {4, 5, 6}, 0.95);
  EXPECT_TRUE(std::isinf(wide.ci_low) && wide.ci_low < 0);
  EXPECT_TRUE(std::isinf(wide.ci_high) && wide.ci_high > 0);
  // 5 vs 5 at 95 %: c = 2, so the 3rd and 23rd of 25 sorted differences.
  const ShiftEstimate f = HodgesLehmannShift({0, 10, 20, 30, 40}, {1, 11, 21, 31, 41}, 0.95);
  EXPECT_DOUBLE_EQ(f.estimate, 1.0);
  EXPECT_DOUBLE_EQ(f.ci_low, -29.0);  // sorted: -39 -29 -29 -19 ... 31 31 41
  EXPECT_DOUBLE_EQ(f.ci_high, 31.0);
  EXPECT_NEAR(f.confidence, 1 - 8.0 / 252, 1e-12);
  // Robust: one wild value does not move the estimate much.
  const ShiftEstimate g =
      HodgesLehmannShift({10, 10.1, 9.9, 10, 10}, {11, 11.1, 10.9, 11, 50}, 0.9);
  EXPECT_NEAR(g.estimate, 1.0, 0.11);
}

TEST(HodgesLehmann, Ratio) {
  const auto r = HodgesLehmannRatio({100, 102, 98, 101, 99}, {95, 96.9, 93.1, 95.95, 94.05}, 0.9);
  ASSERT_TRUE(r.has_value());
  EXPECT_NEAR(r->estimate, 0.95, 1e-9);
  EXPECT_LT(r->ci_low, 0.95);
  EXPECT_GT(r->ci_high, 0.95);
  EXPECT_LT(r->ci_high, 1.0);
  EXPECT_FALSE(HodgesLehmannRatio({1, 0, 2}, {1, 2, 3}, 0.9).has_value());
  EXPECT_FALSE(HodgesLehmannRatio({}, {1, 2, 3}, 0.9).has_value());
}

TEST(BenjaminiHochberg, SmallExample) {
  // Sorted 0.005 0.01 0.03 0.04 -> 4p/rank 0.02 0.02 0.04 0.04 (R: p.adjust(.., "BH")).
  const std::vector<double> q = BenjaminiHochberg({0.01, 0.04, 0.03, 0.005});
  ASSERT_EQ(q.size(), 4u);
  EXPECT_NEAR(q[0], 0.02, 1e-15);
  EXPECT_NEAR(q[1], 0.04, 1e-15);
  EXPECT_NEAR(q[2], 0.04, 1e-15);
  EXPECT_NEAR(q[3], 0.02, 1e-15);
  EXPECT_TRUE(BenjaminiHochberg({}).empty());
  // NaN counts as 1 but still counts towards m.
  const std::vector<double> qn = BenjaminiHochberg({0.01, std::nan("")});
  EXPECT_NEAR(qn[0], 0.02, 1e-15);
  EXPECT_DOUBLE_EQ(qn[1], 1.0);
}

TEST(BenjaminiHochberg, Paper1995Example) {
  // Benjamini & Hochberg (1995), section 4: 15 p-values, 4 rejected at q* = 0.05
  // (Bonferroni would reject 3).
  const std::vector<double> p = {0.0001, 0.0004, 0.0019, 0.0095, 0.0201, 0.0278, 0.0298, 0.0344,
                                 0.0459, 0.3240, 0.4262, 0.5719, 0.6528, 0.7590, 1.0000};
  const std::vector<bool> reject = BenjaminiHochbergReject(p, 0.05);
  int rejected = 0;
  for (size_t i = 0; i < p.size(); ++i) {
    rejected += reject[i] ? 1 : 0;
    EXPECT_EQ(reject[i], i < 4) << i;
  }
  EXPECT_EQ(rejected, 4);
  const std::vector<double> q = BenjaminiHochberg(p);
  EXPECT_NEAR(q[3], 0.0095 * 15 / 4, 1e-12);
  for (size_t i = 1; i < q.size(); ++i) EXPECT_LE(q[i - 1], q[i]);  // monotone step-up
}

}  // namespace
}  // namespace blkbench::gate
