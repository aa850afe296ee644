// The robust Welch default: the outlier rule, the test, and its false alarms and power
// under the noise models of docs/gating.md, with bounds from the number of simulated
// cells (seeded, so deterministic; the bounds say the result is no accident of the seed).
#include <cmath>
#include <vector>

#include "controller/gate/gate_proof.h"
#include "controller/gate/outliers.h"
#include "controller/gate/robust_welch.h"
#include "controller/gate/verdict.h"
#include "gtest/gtest.h"

namespace blkbench::gate {
namespace {

// One-sided 99.9 % binomial bound: a true rate p over n cells stays below
// p + 3.09 sqrt(p (1 - p) / n) (normal approximation; n p >= 10 in every use below).
double Upper(double p, int n) { return p + 3.09 * std::sqrt(p * (1 - p) / n); }
double Lower(double p, int n) { return p - 3.09 * std::sqrt(p * (1 - p) / n); }

TEST(Outliers, ASlowRepeatIsFlaggedAndNamed) {
  const std::vector<double> base = {100, 101, 99, 100.5, 99.5};
  const std::vector<double> cand = {95, 96, 66.5, 95.5, 94.5};
  const std::vector<OutlierFlag> f = FlagOutliers(cand, base, true, 0.0);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].index, 2);
  EXPECT_DOUBLE_EQ(f[0].value, 66.5);
  EXPECT_NEAR(f[0].deviation, 66.5 / 95.0 - 1, 1e-9);
  EXPECT_NE(f[0].reason.find("below the side median"), std::string::npos) << f[0].reason;
  const CellVerdict v = Decide(base, cand, Direction::kHigherIsBetter, {});
  ASSERT_EQ(v.outliers.size(), 1u);
  EXPECT_TRUE(v.outliers[0].candidate);
  EXPECT_EQ(v.cand_repeats, 4);
  EXPECT_EQ(v.verdict, Verdict::kRegression) << v.headline;
  EXPECT_NE(v.headline.find("outliers set aside: 0 baseline, 1 candidate"), std::string::npos)
      << v.headline;
}

TEST(Outliers, ASlowMajorityIsNotTurnedIntoARegression) {
  // 3 of 5 slow: the side's median is slow, the two normal repeats sit at the other side's
  // median and are kept; the cell is inconclusive, not a -30 % regression.
  const std::vector<double> base = {100, 101, 99, 100.5, 99.5};
  const std::vector<double> cand = {71, 101, 70.8, 68.5, 101};
  EXPECT_TRUE(FlagOutliers(cand, base, true, 0.01).empty());
  EXPECT_NE(Decide(base, cand, Direction::kHigherIsBetter, {}).verdict, Verdict::kRegression);
}

TEST(Outliers, SmallSidesAndNoiseFreeSidesAreNotFlagged) {
  EXPECT_TRUE(FlagOutliers({100, 100, 60}, {}, false, 0.01).empty());
  EXPECT_TRUE(FlagOutliers({5, 5, 5, 5, 5}, {5, 5, 5, 5, 5}, false, 0.0).empty());
  EXPECT_EQ(RobustLogScale({1, 2, 3}), 0.0);
}

TEST(RobustWelch, UnequalSpreadsGetWelchDegreesOfFreedom) {
  const std::vector<double> base = {100, 101, 99, 100.5, 99.5};
  const std::vector<double> cand = {90, 96, 84, 93, 87};
  const auto w = RobustWelch(base, cand, 0.02, NoisePrior(), NoisePrior());
  ASSERT_TRUE(w.has_value());
  EXPECT_LT(w->df, 5.0);  // ~4.1: the noisy side's 4 df dominate
  EXPECT_GT(w->df, 4.0);
  EXPECT_NEAR(w->relative_change, -0.10, 1e-9);
  EXPECT_LT(w->ci_low, w->relative_change);
  EXPECT_GT(w->ci_high, w->relative_change);
  // A side far above its prior keeps its own variance (F test), one that fits is pooled.
  const NoisePrior quiet{100, 1e-4, 20};
  EXPECT_EQ(PriorForSide(quiet, 0.01, 4).df, 0.0);
  EXPECT_EQ(PriorForSide(quiet, 1.2e-4, 4).df, 100.0);
}

VerdictRates Simulate(NoiseModel m, double change, int experiments, uint64_t seed, int extra = 0) {
  SyntheticScenario s;
  s.model = std::move(m);
  s.change = change;
  s.max_extra = extra;
  return SimulateSynthetic(s, GateOptions(), experiments, seed);
}

NoiseModel Outliers() {
  NoiseModel m;
  m.outlier_share = 0.1;
  m.outlier_factor = 0.7;
  return m;
}

NoiseModel CvRatio3() {
  NoiseModel m;
  m.cv_ratio = 3;
  return m;
}

// The goal: false alarms <= 1 % per cell under every model at 5 repeats, 2 % CV; 500
// experiments = 10,000 cells each.
TEST(RobustGate, FalseAlarmsAtMostOnePercentUnderEachModel) {
  constexpr int kExperiments = 500, kCells = kExperiments * 20;
  NoiseModel tails;
  tails.t_df = 3;
  NoiseModel drift;
  drift.drift = 0.04;
  const std::vector<NoiseModel> models = {NoiseModel(), Outliers(), CvRatio3(),
                                          tails,        drift,      FittedLoopShmModel()};
  for (size_t i = 0; i < models.size(); ++i) {
    const VerdictRates r = Simulate(models[i], 0.0, kExperiments, 100 + i);
    EXPECT_LE(r.regression, Upper(0.01, kCells)) << models[i].Describe();
    EXPECT_LE(r.improvement, Upper(0.01, kCells)) << models[i].Describe();
  }
}

// Cell CVs spread 3x and the candidate 3x noisier: the one model where the side priors'
// shape is wrong; measured 1.2 % at 5 repeats (docs/gating.md says so). This pins it
// below 1.5 % so a change that makes it worse is seen.
TEST(RobustGate, SpreadCvsStayBelowOneAndAHalfPercent) {
  NoiseModel m = CvRatio3();
  m.cv_spread = 3;
  EXPECT_LE(Simulate(m, 0.0, 500, 120).regression, Upper(0.015, 10000));
}

TEST(RobustGate, PowerAtFiveRepeatsUnderNormalNoise) {
  const VerdictRates r = Simulate(NoiseModel(), -0.05, 500, 130);
  EXPECT_GE(r.regression, Lower(0.92, 10000));
  EXPECT_EQ(r.improvement, 0.0);
}

// Outliers and a 3x noisier candidate remove information 5 repeats cannot replace;
// --auto-repeat 40 (at most 45 per side) must reach 90 % and stay within 1 % false
// alarms with alpha spent across rounds. 60 experiments = 1,200 cells each.
TEST(RobustGate, AutoRepeatReachesNinetyPercentPower) {
  constexpr int kExperiments = 60, kCells = kExperiments * 20;
  for (const NoiseModel& m : {Outliers(), CvRatio3()}) {
    const VerdictRates p = Simulate(m, -0.05, kExperiments, 140, 40);
    EXPECT_GE(p.regression, Lower(0.90, kCells)) << m.Describe();
    EXPECT_LE(p.max_repeats, 45);
    const VerdictRates n = Simulate(m, 0.0, kExperiments, 141, 40);
    EXPECT_LE(n.regression, Upper(0.01, kCells)) << m.Describe();
  }
}

TEST(NoiseModels, OutlierSpecParsesAndRejects) {
  auto m = WithOutliers(NoiseModel(), "0.1x0.7");
  ASSERT_TRUE(m.ok());
  EXPECT_DOUBLE_EQ(m->outlier_share, 0.1);
  EXPECT_DOUBLE_EQ(m->outlier_factor, 0.7);
  EXPECT_FALSE(WithOutliers(NoiseModel(), "0.6x0.7").ok());
  EXPECT_FALSE(WithOutliers(NoiseModel(), "10%").ok());
  EXPECT_FALSE(FittedLoopShmModel().residuals.empty());
}

}  // namespace
}  // namespace blkbench::gate
