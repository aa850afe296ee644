// Nice-number ticks and their labels; see plot_axis.h.
#include "common/plot_axis.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

namespace blkbench::plot {
namespace {

constexpr double kEps = 1e-9;             // relative slack for values already on a tick
constexpr double kMinLogValue = 1e-9;     // where a log axis clamps values <= 0
constexpr double kMaxLogTickDecades = 3;  // data spanning up to this: ticks at 1, 2, 5 × 10^k
constexpr int kMaxLogDecadeTicks = 8;     // beyond: at most this many decade ticks

// The one of 1, 2, 5 × 10^k nearest to x (x > 0), as Heckbert's nicenum(x, round).
double NiceRound(double x) {
  const double mag = std::pow(10, std::floor(std::log10(x)));
  const double f = x / mag;
  return (f < 1.5 ? 1 : f < 3 ? 2 : f < 7 ? 5 : 10) * mag;
}

// `v` in the unit of `units` that fits its magnitude, with the decimals `precision`
// (the step, or the value on a log axis) needs, trailing zeros trimmed.
std::string Scaled(double v, double precision,
                   const std::vector<std::pair<double, const char*>>& units) {
  if (std::fabs(v) < kEps * std::max(1.0, precision)) return "0";
  size_t u = 0;
  while (u + 1 < units.size() && std::fabs(v) >= units[u + 1].first * (1 - kEps)) ++u;
  const double div = units[u].first;
  const int decimals =
      std::max(0, static_cast<int>(std::ceil(-std::log10(precision / div) - kEps)));
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.*f", std::min(decimals, 9), v / div);
  std::string s = buf;
  if (s.find('.') != std::string::npos) {
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
  }
  return s + units[u].second;
}

}  // namespace

Ticks LinearTicks(double lo, double hi, int max_ticks) {
  if (lo > hi) std::swap(lo, hi);
  if (!(hi > lo)) {  // one value: a domain around it (not below 0 for a value >= 0)
    const double pad = lo == 0 ? 1 : std::fabs(lo) * 0.1;
    lo = lo >= 0 ? std::max(0.0, lo - pad) : lo - pad;
    hi += pad;
  }
  Ticks t;
  t.step = NiceRound((hi - lo) / std::max(1, max_ticks - 1));
  const double first = std::floor(lo / t.step + kEps);
  const double last = std::ceil(hi / t.step - kEps);
  for (double k = first; k <= last + kEps; k += 1) {
    const double v = k * t.step;
    t.values.push_back(v == 0 ? 0.0 : v);  // no -0
  }
  t.lo = t.values.front();
  t.hi = t.values.back();
  return t;
}

Ticks LogTicks(double lo, double hi) {
  lo = std::max(lo, kMinLogValue);
  hi = std::max(hi, kMinLogValue);
  if (lo > hi) std::swap(lo, hi);
  Ticks t;
  t.log = true;
  const int k0 = static_cast<int>(std::floor(std::log10(lo) + kEps));
  int k1 = static_cast<int>(std::ceil(std::log10(hi) - kEps));
  if (std::log10(hi / lo) <= kMaxLogTickDecades) {
    std::vector<double> candidates;
    for (int k = k0 - 1; k <= k1 + 1; ++k) {
      for (double m : {1.0, 2.0, 5.0}) candidates.push_back(m * std::pow(10, k));
    }
    size_t a = 0, b = candidates.size() - 1;
    while (a + 1 < candidates.size() && candidates[a + 1] <= lo * (1 + kEps)) ++a;
    while (b > 0 && candidates[b - 1] >= hi * (1 - kEps)) --b;
    if (b <= a) b = a + 1;
    t.values.assign(candidates.begin() + static_cast<long>(a),
                    candidates.begin() + static_cast<long>(b) + 1);
  } else {
    const int stride = (k1 - k0 + kMaxLogDecadeTicks - 1) / kMaxLogDecadeTicks;
    k1 = k0 + stride * ((k1 - k0 + stride - 1) / stride);
    for (int k = k0; k <= k1; k += stride) t.values.push_back(std::pow(10, k));
  }
  t.lo = t.values.front();
  t.hi = t.values.back();
  return t;
}

double Fraction(const Ticks& t, double v) {
  if (t.log) {
    return (std::log10(std::max(v, kMinLogValue)) - std::log10(t.lo)) /
           (std::log10(t.hi) - std::log10(t.lo));
  }
  return (v - t.lo) / (t.hi - t.lo);
}

bool IsNiceNumber(double v) {
  if (!(v > 0) || !std::isfinite(v)) return false;
  const double f = v / std::pow(10, std::floor(std::log10(v)));
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if (std::fabs(f - m) < 1e-6 * m) return true;
  }
  return false;
}

std::string CountTick(double v, const Ticks& t) {
  return Scaled(v, t.log ? v : t.step, {{1, ""}, {1e3, "k"}, {1e6, "M"}, {1e9, "G"}});
}

std::string DurationTick(double ns, const Ticks& t) {
  return Scaled(ns, t.log ? ns : t.step,
                {{1, " ns"}, {1e3, " \u00b5s"}, {1e6, " ms"}, {1e9, " s"}});
}

}  // namespace blkbench::plot
