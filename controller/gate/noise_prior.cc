// Empirical-Bayes noise prior for the moderated t-test (see noise_prior.h).
#include "controller/gate/noise_prior.h"

#include <cmath>

namespace blkbench::gate {

double Digamma(double x) {
  // Recurrence psi(x) = psi(x + 1) - 1/x up to x >= 12, then the asymptotic series
  // ln x - 1/(2x) - sum B_2k / (2k x^2k).
  double acc = 0.0;
  while (x < 12.0) {
    acc -= 1.0 / x;
    x += 1.0;
  }
  const double f = 1.0 / (x * x);
  return acc + std::log(x) - 0.5 / x -
         f * (1.0 / 12 - f * (1.0 / 120 - f * (1.0 / 252 - f * (1.0 / 240 - f / 132))));
}

double Trigamma(double x) {
  // psi'(x) = psi'(x + 1) + 1/x^2 up to x >= 12, then 1/x + 1/(2x^2) + sum B_2k / x^(2k+1).
  double acc = 0.0;
  while (x < 12.0) {
    acc += 1.0 / (x * x);
    x += 1.0;
  }
  const double f = 1.0 / (x * x);
  return acc + 1.0 / x + 0.5 * f +
         f / x * (1.0 / 6 - f * (1.0 / 30 - f * (1.0 / 42 - f * (1.0 / 30 - f * 5.0 / 66))));
}

double TrigammaInverse(double y) {
  if (!(y > 0.0)) return INFINITY;
  // Trigamma is strictly decreasing from +inf (x -> 0) to 0 (x -> inf): bisect on log x.
  double lo = std::log(1e-12);
  double hi = std::log(1e12);
  for (int i = 0; i < 200 && hi - lo > 1e-12; ++i) {
    const double mid = 0.5 * (lo + hi);
    if (Trigamma(std::exp(mid)) > y) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  return std::exp(0.5 * (lo + hi));
}

NoisePrior EstimateNoisePrior(const std::vector<CellNoise>& cells) {
  std::vector<double> e;
  double trigamma_mean = 0.0;
  double total_df = 0.0;
  for (const CellNoise& c : cells) {
    if (!(c.df >= 1.0) || !(c.variance > 0.0) || !std::isfinite(c.variance)) continue;
    e.push_back(std::log(c.variance) - Digamma(c.df / 2) + std::log(c.df / 2));
    trigamma_mean += Trigamma(c.df / 2);
    total_df += c.df;
  }
  NoisePrior prior;
  const int k = static_cast<int>(e.size());
  if (k < kMinPriorCells) return prior;
  trigamma_mean /= k;
  double mean = 0.0;
  for (double v : e) mean += v;
  mean /= k;
  double var = 0.0;
  for (double v : e) var += (v - mean) * (v - mean);
  var /= k - 1;
  const double excess = var - trigamma_mean;
  double d0 = total_df;  // cap: "unbounded" pooling is as good as all the data
  if (excess > 0.0) d0 = std::fmin(total_df, 2.0 * TrigammaInverse(excess));
  prior.df = d0;
  prior.variance = std::exp(mean + Digamma(d0 / 2) - std::log(d0 / 2));
  prior.cells = k;
  return prior;
}

double ModeratedVariance(const NoisePrior& prior, double s2, double df) {
  if (!(prior.df > 0.0)) return s2;
  return (prior.df * prior.variance + df * s2) / (prior.df + df);
}

}  // namespace blkbench::gate
