// Location and spread estimators for the gate (see robust.h for why each exists).
#include "controller/gate/robust.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace blkbench::gate {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::vector<double> Sorted(const std::vector<double>& x) {
  std::vector<double> s = x;
  std::sort(s.begin(), s.end());
  return s;
}

double SortedQuantile(const std::vector<double>& s, double q) {
  if (s.empty()) return kNaN;
  const double h = (static_cast<double>(s.size()) - 1.0) * std::clamp(q, 0.0, 1.0);
  const auto lo = static_cast<size_t>(std::floor(h));
  const size_t hi = std::min(lo + 1, s.size() - 1);
  return s[lo] + (h - static_cast<double>(lo)) * (s[hi] - s[lo]);
}

}  // namespace

double Mean(const std::vector<double>& x) {
  if (x.empty()) return kNaN;
  return std::accumulate(x.begin(), x.end(), 0.0) / static_cast<double>(x.size());
}

double StdDev(const std::vector<double>& x) {
  if (x.empty()) return kNaN;
  if (x.size() == 1) return 0.0;
  const double m = Mean(x);
  double ss = 0.0;
  for (double v : x) ss += (v - m) * (v - m);
  return std::sqrt(ss / static_cast<double>(x.size() - 1));
}

double Cv(const std::vector<double>& x) {
  const double m = Mean(x);
  if (m == 0.0) return kNaN;
  return StdDev(x) / std::fabs(m);
}

double Median(const std::vector<double>& x) { return SortedQuantile(Sorted(x), 0.5); }

double Quantile(const std::vector<double>& x, double q) { return SortedQuantile(Sorted(x), q); }

double TrimmedMean(const std::vector<double>& x, size_t trim_each_side) {
  if (x.empty()) return kNaN;
  if (2 * trim_each_side >= x.size()) return Median(x);
  const std::vector<double> s = Sorted(x);
  const auto first = s.begin() + static_cast<std::ptrdiff_t>(trim_each_side);
  const auto last = s.end() - static_cast<std::ptrdiff_t>(trim_each_side);
  return std::accumulate(first, last, 0.0) / static_cast<double>(last - first);
}

double Mad(const std::vector<double>& x) {
  if (x.empty()) return kNaN;
  const double m = Median(x);
  std::vector<double> dev;
  dev.reserve(x.size());
  for (double v : x) dev.push_back(std::fabs(v - m));
  return Median(dev);
}

}  // namespace blkbench::gate
