// E-divisive means with permutation test and recursive bisection (see change_point.h).
#include "controller/gate/change_point.h"

#include <algorithm>
#include <cmath>

#include "controller/gate/rng.h"

namespace blkbench::gate {
namespace {

struct Split {
  size_t index = 0;  // offset within the segment
  double statistic = 0.0;
};

// Best split of z (a whole segment) by the scaled energy statistic.
Split BestSplit(const std::vector<double>& z, size_t min_segment, double exponent) {
  const size_t len = z.size();
  auto dist = [&](size_t i, size_t j) {
    const double d = std::fabs(z[i] - z[j]);
    return exponent == 1.0 ? d : std::pow(d, exponent);
  };
  // Start with everything on the right: within_right = sum over all pairs.
  double within_left = 0.0;
  double within_right = 0.0;
  for (size_t i = 0; i < len; ++i) {
    for (size_t j = i + 1; j < len; ++j) within_right += dist(i, j);
  }
  double between = 0.0;
  Split best;
  bool found = false;
  for (size_t t = 1; t + min_segment <= len; ++t) {
    // Move z[t-1] from the right side to the left side.
    const size_t k = t - 1;
    double to_left = 0.0;
    for (size_t i = 0; i < k; ++i) to_left += dist(i, k);
    double to_right = 0.0;
    for (size_t j = t; j < len; ++j) to_right += dist(k, j);
    within_left += to_left;
    within_right -= to_right;
    between += to_right - to_left;
    if (t < min_segment) continue;
    const auto n = static_cast<double>(t);
    const auto m = static_cast<double>(len - t);
    // Mean pairwise distances; a side of one point has no within pairs (term 0).
    const double mean_between = between / (n * m);
    const double mean_left = t > 1 ? within_left / (n * (n - 1) / 2) : 0.0;
    const double mean_right = len - t > 1 ? within_right / (m * (m - 1) / 2) : 0.0;
    const double energy = 2.0 * mean_between - mean_left - mean_right;
    const double q = n * m / (n + m) * energy;
    if (!found || q > best.statistic) {
      best = {t, q};
      found = true;
    }
  }
  return best;
}

void Search(const std::vector<double>& series, size_t begin, size_t end,
            const EDivisiveOptions& opts, std::vector<ChangePoint>& out) {
  const auto min_segment = static_cast<size_t>(std::max(1, opts.min_segment));
  if (end - begin < 2 * min_segment) return;
  std::vector<double> z(series.begin() + static_cast<std::ptrdiff_t>(begin),
                        series.begin() + static_cast<std::ptrdiff_t>(end));
  const Split observed = BestSplit(z, min_segment, opts.exponent);

  Rng rng(DeriveSeed(DeriveSeed(opts.seed, begin), end));
  int at_least_as_large = 0;
  // Tolerance so that exact ties with the observed value (e.g. a constant series)
  // count as "at least as large" despite rounding in the running sums.
  const double tolerance = 1e-12 * std::max(1.0, std::fabs(observed.statistic));
  for (int r = 0; r < opts.permutations; ++r) {
    rng.Shuffle(z);
    if (BestSplit(z, min_segment, opts.exponent).statistic >= observed.statistic - tolerance) {
      ++at_least_as_large;
    }
  }
  const double p = (1.0 + at_least_as_large) / (opts.permutations + 1.0);
  if (!(p < opts.p_threshold)) return;
  const size_t cut = begin + observed.index;
  out.push_back({cut, p, observed.statistic});
  Search(series, begin, cut, opts, out);
  Search(series, cut, end, opts, out);
}

}  // namespace

std::vector<ChangePoint> EDivisive(const std::vector<double>& series,
                                   const EDivisiveOptions& options) {
  std::vector<ChangePoint> out;
  Search(series, 0, series.size(), options, out);
  std::sort(out.begin(), out.end(),
            [](const ChangePoint& a, const ChangePoint& b) { return a.index < b.index; });
  return out;
}

}  // namespace blkbench::gate
