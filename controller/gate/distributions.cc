// Normal CDF/quantile and the exact Mann-Whitney U null distribution (see distributions.h).
#include "controller/gate/distributions.h"

#include <cmath>
#include <limits>
#include <numbers>

namespace blkbench::gate {

double NormalCdf(double z) { return 0.5 * std::erfc(-z / std::numbers::sqrt2); }

double NormalUpperTail(double z) { return 0.5 * std::erfc(z / std::numbers::sqrt2); }

double NormalQuantile(double p) {
  if (!(p > 0.0)) return -std::numeric_limits<double>::infinity();
  if (!(p < 1.0)) return std::numeric_limits<double>::infinity();
  double lo = -40.0;
  double hi = 40.0;
  for (int i = 0; i < 100 && hi - lo > 1e-15; ++i) {
    const double mid = 0.5 * (lo + hi);
    if (NormalCdf(mid) < p) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  return 0.5 * (lo + hi);
}

std::vector<double> MannWhitneyNullPmf(int m, int n) {
  if (m < 0 || n < 0) return {};
  // prev[j] holds P_{i-1, j}; cur[j] is built as P_{i, j}.
  std::vector<std::vector<double>> prev(static_cast<size_t>(n) + 1, std::vector<double>{1.0});
  for (int i = 1; i <= m; ++i) {
    std::vector<std::vector<double>> cur(static_cast<size_t>(n) + 1);
    cur[0] = {1.0};
    for (int j = 1; j <= n; ++j) {
      std::vector<double> dist(static_cast<size_t>(i) * j + 1, 0.0);
      const double px = static_cast<double>(i) / (i + j);
      const std::vector<double>& a = prev[j];  // P_{i-1, j}, shifted by j
      for (size_t u = 0; u < a.size(); ++u) dist[u + j] += px * a[u];
      const std::vector<double>& b = cur[j - 1];  // P_{i, j-1}
      for (size_t u = 0; u < b.size(); ++u) dist[u] += (1.0 - px) * b[u];
      cur[j] = std::move(dist);
    }
    prev = std::move(cur);
  }
  return prev[n];
}

int MannWhitneyLowerCritical(int m, int n, double tail, double* achieved) {
  if (achieved != nullptr) *achieved = 0.0;
  if (m <= 0 || n <= 0 || !(tail > 0.0)) return -1;
  if (m <= kExactMaxPerSide && n <= kExactMaxPerSide) {
    const std::vector<double> pmf = MannWhitneyNullPmf(m, n);
    double cdf = 0.0;
    int c = -1;
    for (size_t u = 0; u < pmf.size(); ++u) {
      // A relative slack keeps P(U <= c) == tail (e.g. 1/20 at m = n = 3) on the right side.
      if (cdf + pmf[u] > tail * (1.0 + 1e-9)) break;
      cdf += pmf[u];
      c = static_cast<int>(u);
    }
    if (achieved != nullptr) *achieved = cdf;
    return c;
  }
  // Normal approximation: P(U <= c) ~ Phi((c + 0.5 - mu) / sigma) <= tail.
  const double mu = 0.5 * m * n;
  const double sigma = std::sqrt(m * n * (m + n + 1.0) / 12.0);
  const int c = static_cast<int>(std::floor(mu - 0.5 + NormalQuantile(tail) * sigma));
  if (c < 0) return -1;
  if (achieved != nullptr) *achieved = NormalCdf((c + 0.5 - mu) / sigma);
  return c;
}

namespace {

// Continued fraction of I_x(a, b) (modified Lentz), valid for x < (a + 1) / (a + b + 2).
double BetaContinuedFraction(double x, double a, double b) {
  constexpr double kTiny = 1e-300;
  constexpr double kEps = 1e-15;
  double c = 1.0;
  double d = 1.0 - (a + b) * x / (a + 1.0);
  if (std::fabs(d) < kTiny) d = kTiny;
  d = 1.0 / d;
  double f = d;
  for (int m = 1; m <= 1000; ++m) {
    // Even step: d_{2m} = m (b - m) x / ((a + 2m - 1)(a + 2m)).
    const double even = m * (b - m) * x / ((a + 2.0 * m - 1.0) * (a + 2.0 * m));
    d = 1.0 + even * d;
    if (std::fabs(d) < kTiny) d = kTiny;
    c = 1.0 + even / c;
    if (std::fabs(c) < kTiny) c = kTiny;
    d = 1.0 / d;
    f *= d * c;
    // Odd step: d_{2m+1} = -(a + m)(a + b + m) x / ((a + 2m)(a + 2m + 1)).
    const double odd = -(a + m) * (a + b + m) * x / ((a + 2.0 * m) * (a + 2.0 * m + 1.0));
    d = 1.0 + odd * d;
    if (std::fabs(d) < kTiny) d = kTiny;
    c = 1.0 + odd / c;
    if (std::fabs(c) < kTiny) c = kTiny;
    d = 1.0 / d;
    const double delta = d * c;
    f *= delta;
    if (std::fabs(delta - 1.0) < kEps) break;
  }
  return f;
}

}  // namespace

double RegularizedIncompleteBeta(double x, double a, double b) {
  if (!(x > 0.0)) return 0.0;
  if (!(x < 1.0)) return 1.0;
  // x^a (1-x)^b / (a B(a, b)), in logs to avoid overflow for large a or b.
  const double log_front =
      std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * std::log(x) + b * std::log1p(-x);
  if (x < (a + 1.0) / (a + b + 2.0)) {
    return std::exp(log_front) * BetaContinuedFraction(x, a, b) / a;
  }
  return 1.0 - std::exp(log_front) * BetaContinuedFraction(1.0 - x, b, a) / b;
}

double StudentTUpperTail(double t, double df) {
  if (std::isnan(t) || !(df > 0.0)) return std::numeric_limits<double>::quiet_NaN();
  if (std::isinf(df) || df > 1e7) return NormalUpperTail(t);
  if (std::isinf(t)) return t > 0 ? 0.0 : 1.0;
  const double two_sided = RegularizedIncompleteBeta(df / (df + t * t), 0.5 * df, 0.5);
  return t > 0 ? 0.5 * two_sided : 1.0 - 0.5 * two_sided;
}

double StudentTQuantile(double p, double df) {
  if (!(p > 0.0)) return -std::numeric_limits<double>::infinity();
  if (!(p < 1.0)) return std::numeric_limits<double>::infinity();
  if (std::isinf(df) || df > 1e7) return NormalQuantile(p);
  if (p < 0.5) return -StudentTQuantile(1.0 - p, df);
  // Bracket [0, hi] with P(T > hi) < 1 - p, then bisect.
  double lo = 0.0;
  double hi = 1.0;
  while (StudentTUpperTail(hi, df) > 1.0 - p && hi < 1e300) hi *= 2.0;
  for (int i = 0; i < 200 && hi - lo > 1e-13 * hi; ++i) {
    const double mid = 0.5 * (lo + hi);
    if (StudentTUpperTail(mid, df) > 1.0 - p) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  return 0.5 * (lo + hi);
}

}  // namespace blkbench::gate
