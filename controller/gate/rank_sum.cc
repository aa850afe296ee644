// Mann-Whitney U test with mid-ranks, exact and tie-corrected normal p-values.
#include "controller/gate/rank_sum.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "controller/gate/distributions.h"

namespace blkbench::gate {

RankSumResult MannWhitneyTest(const std::vector<double>& x, const std::vector<double>& y) {
  RankSumResult r;
  const size_t m = x.size();
  const size_t n = y.size();
  if (m == 0 || n == 0) return r;

  // Pool, sort, assign mid-ranks to tie groups; accumulate x's rank sum and tie term.
  std::vector<std::pair<double, bool>> pooled;  // (value, from x)
  pooled.reserve(m + n);
  for (double v : x) pooled.emplace_back(v, true);
  for (double v : y) pooled.emplace_back(v, false);
  std::sort(pooled.begin(), pooled.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  const size_t total = pooled.size();
  double rank_sum_x = 0.0;
  double tie_term = 0.0;
  bool ties = false;
  for (size_t i = 0; i < total;) {
    size_t j = i;
    while (j < total && pooled[j].first == pooled[i].first) ++j;
    const double mid_rank = 0.5 * static_cast<double>(i + 1 + j);  // ranks i+1 .. j
    for (size_t k = i; k < j; ++k) {
      if (pooled[k].second) rank_sum_x += mid_rank;
    }
    const auto t = static_cast<double>(j - i);
    if (j - i > 1) ties = true;
    tie_term += t * t * t - t;
    i = j;
  }
  const double md = static_cast<double>(m);
  const double nd = static_cast<double>(n);
  const double nn = md + nd;
  r.u = rank_sum_x - md * (md + 1.0) / 2.0;
  const double mu = md * nd / 2.0;
  const double var = md * nd / 12.0 * ((nn + 1.0) - tie_term / (nn * (nn - 1.0)));
  if (var > 0.0) {
    const double dev = r.u - mu;
    const double corrected = std::max(0.0, std::fabs(dev) - 0.5);
    r.z = std::copysign(corrected / std::sqrt(var), dev);
  }

  if (!ties && m <= static_cast<size_t>(kExactMaxPerSide) &&
      n <= static_cast<size_t>(kExactMaxPerSide)) {
    const std::vector<double> pmf = MannWhitneyNullPmf(static_cast<int>(m), static_cast<int>(n));
    const auto u = static_cast<size_t>(std::lround(r.u));
    double lower = 0.0;  // P(U <= u)
    for (size_t k = 0; k <= u; ++k) lower += pmf[k];
    double upper = 0.0;  // P(U >= u)
    for (size_t k = u; k < pmf.size(); ++k) upper += pmf[k];
    r.p_value = std::min(1.0, 2.0 * std::min(lower, upper));
    r.mid_p_value = std::min(1.0, 2.0 * (std::min(lower, upper) - 0.5 * pmf[u]));
    r.exact = true;
    return r;
  }
  if (var <= 0.0) return r;  // every value equal: no evidence either way
  r.p_value = std::min(1.0, 2.0 * NormalUpperTail(std::fabs(r.z)));
  r.mid_p_value = std::min(1.0, 2.0 * NormalUpperTail(std::fabs(r.u - mu) / std::sqrt(var)));
  return r;
}

}  // namespace blkbench::gate
