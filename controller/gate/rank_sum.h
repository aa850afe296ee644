// Mann-Whitney U / Wilcoxon rank-sum test: does one set of repeats tend to be larger
// than the other? Two-sided p-value, exact for small tie-free samples.
#ifndef BLKBENCH_CONTROLLER_GATE_RANK_SUM_H_
#define BLKBENCH_CONTROLLER_GATE_RANK_SUM_H_

#include <vector>

namespace blkbench::gate {

// Why a rank test: benchmark repeats are rarely normal (one slow outlier, bimodal
// caches), and with 5 repeats normality cannot be checked. The rank-sum test assumes only
// exchangeability under "no change", loses just 5 % efficiency against the t-test on
// normal data, and is immune to outliers. Its weakness is discreteness: with 3 vs 3
// repeats the smallest two-sided p-value is 0.1, with 5 vs 5 it is 0.0079.
//
// Exact p-values (distributions.h) are used when there are no ties and both samples have
// at most kExactMaxPerSide values. Otherwise the normal approximation with the tie
// correction of the variance, sigma^2 = m n / 12 * ((N + 1) - sum(t^3 - t) / (N (N - 1))),
// and a continuity correction of 1/2 (as R's wilcox.test and SciPy's mannwhitneyu).
struct RankSumResult {
  double u = 0.0;        // #{(i, j) : x_i > y_j} + #{x_i == y_j} / 2
  double z = 0.0;        // continuity-corrected normal score, signed like U - m n / 2
  double p_value = 1.0;  // two-sided
  // Two-sided mid-p (Lancaster 1961): counts only half the probability of the observed U,
  // 2 * min(P(U < u) + P(U = u) / 2, P(U > u) + P(U = u) / 2). Equal to p_value on the
  // normal path without continuity correction. See verdict.h for why the gate uses it.
  double mid_p_value = 1.0;
  bool exact = false;  // true when the exact null distribution was used
};

// Tests x against y. Empty input or all-equal values give p_value 1.
RankSumResult MannWhitneyTest(const std::vector<double>& x, const std::vector<double>& y);

}  // namespace blkbench::gate

#endif  // BLKBENCH_CONTROLLER_GATE_RANK_SUM_H_
