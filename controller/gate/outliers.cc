// The gate's MAD outlier rule (outliers.h).
#include "controller/gate/outliers.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "controller/gate/robust.h"

namespace blkbench::gate {
namespace {

bool LogValues(const std::vector<double>& x, std::vector<double>& out) {
  out.clear();
  for (double v : x) {
    if (!(v > 0.0) || !std::isfinite(v)) return false;
    out.push_back(std::log(v));
  }
  return true;
}

}  // namespace

double RobustLogScale(const std::vector<double>& x) {
  std::vector<double> l;
  if (static_cast<int>(x.size()) < kOutlierMinRepeats || !LogValues(x, l)) return 0.0;
  return kMadToSigma * Mad(l);
}

double OutlierScale(const std::vector<const std::vector<double>*>& sides) {
  std::vector<double> s;
  for (const std::vector<double>* x : sides) {
    if (const double v = RobustLogScale(*x); v > 0.0) s.push_back(v);
  }
  return s.empty() ? 0.0 : Median(s);
}

std::vector<OutlierFlag> FlagOutliers(const std::vector<double>& x,
                                      const std::vector<double>& other, bool candidate,
                                      double group_scale) {
  std::vector<OutlierFlag> flags;
  std::vector<double> l, lo;
  if (static_cast<int>(x.size()) < kOutlierMinRepeats || !LogValues(x, l)) return flags;
  const double m = Median(l);
  const bool have_other = !other.empty() && LogValues(other, lo);
  const double m_other = have_other ? Median(lo) : 0.0;
  // The cell's own scale: the MAD of both sides' log values, each around its own
  // side's median (10 deviations at 5 + 5: two slow repeats on one side do not move it).
  std::vector<double> dev;
  for (double v : l) dev.push_back(std::fabs(v - m));
  if (have_other) {
    for (double v : lo) dev.push_back(std::fabs(v - m_other));
  }
  const double scale = std::max(kMadToSigma * Median(dev), group_scale);
  if (!(scale > 0.0)) return flags;  // noise-free: nothing is unusual
  const double threshold = kOutlierK * scale;
  // Most deviant first, at most floor((n - 1) / 2).
  std::vector<int> order(x.size());
  for (size_t i = 0; i < x.size(); ++i) order[i] = static_cast<int>(i);
  std::sort(order.begin(), order.end(),
            [&](int a, int b) { return std::fabs(l[a] - m) > std::fabs(l[b] - m); });
  const size_t cap = (x.size() - 1) / 2;
  for (size_t k = 0; k < cap; ++k) {
    const int i = order[k];
    const double d = l[static_cast<size_t>(i)] - m;
    if (!(std::fabs(d) > threshold)) break;
    if (have_other && !(std::fabs(l[static_cast<size_t>(i)] - m_other) > threshold)) continue;
    OutlierFlag f;
    f.candidate = candidate;
    f.index = i;
    f.value = x[static_cast<size_t>(i)];
    f.deviation = std::expm1(d);
    f.threshold = threshold;
    char buf[200];
    std::snprintf(buf, sizeof buf, "%.1f%% %s the side median %.4g; beyond %.0f x %.2f%% robust sd",
                  100.0 * std::fabs(f.deviation), d < 0 ? "below" : "above", std::exp(m), kOutlierK,
                  100.0 * scale);
    f.reason = buf;
    flags.push_back(std::move(f));
  }
  std::sort(flags.begin(), flags.end(),
            [](const OutlierFlag& a, const OutlierFlag& b) { return a.index < b.index; });
  return flags;
}

std::vector<double> WithoutFlagged(const std::vector<double>& x,
                                   const std::vector<OutlierFlag>& flags) {
  std::vector<double> out;
  size_t k = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    if (k < flags.size() && flags[k].index == static_cast<int>(i)) {
      ++k;
      continue;
    }
    out.push_back(x[i]);
  }
  return out;
}

}  // namespace blkbench::gate
