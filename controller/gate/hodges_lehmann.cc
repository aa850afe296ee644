// Hodges-Lehmann shift and ratio with Moses' distribution-free interval.
#include "controller/gate/hodges_lehmann.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "controller/gate/distributions.h"
#include "controller/gate/robust.h"

namespace blkbench::gate {

ShiftEstimate HodgesLehmannShift(const std::vector<double>& x, const std::vector<double>& y,
                                 double confidence) {
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  constexpr double kInf = std::numeric_limits<double>::infinity();
  if (x.empty() || y.empty()) return {kNaN, kNaN, kNaN, kNaN};
  std::vector<double> diffs;
  diffs.reserve(x.size() * y.size());
  for (double xi : x) {
    for (double yj : y) diffs.push_back(yj - xi);
  }
  std::sort(diffs.begin(), diffs.end());
  ShiftEstimate e;
  e.estimate = Median(diffs);

  double tail_prob = 0.0;
  const int c = MannWhitneyLowerCritical(static_cast<int>(x.size()), static_cast<int>(y.size()),
                                         (1.0 - confidence) / 2.0, &tail_prob);
  if (c < 0) {
    e.ci_low = -kInf;
    e.ci_high = kInf;
    e.confidence = 1.0;
    return e;
  }
  const auto k = static_cast<size_t>(c);
  e.ci_low = diffs[k];
  e.ci_high = diffs[diffs.size() - 1 - k];
  e.confidence = 1.0 - 2.0 * tail_prob;
  return e;
}

std::optional<ShiftEstimate> HodgesLehmannRatio(const std::vector<double>& x,
                                                const std::vector<double>& y, double confidence) {
  if (x.empty() || y.empty()) return std::nullopt;
  std::vector<double> lx;
  std::vector<double> ly;
  lx.reserve(x.size());
  ly.reserve(y.size());
  for (double v : x) {
    if (!(v > 0.0)) return std::nullopt;
    lx.push_back(std::log(v));
  }
  for (double v : y) {
    if (!(v > 0.0)) return std::nullopt;
    ly.push_back(std::log(v));
  }
  ShiftEstimate e = HodgesLehmannShift(lx, ly, confidence);
  e.estimate = std::exp(e.estimate);
  e.ci_low = std::exp(e.ci_low);  // exp(-inf) == 0, exp(inf) == inf
  e.ci_high = std::exp(e.ci_high);
  return e;
}

}  // namespace blkbench::gate
