// Percentile bootstrap of a relative change (see bootstrap.h for coverage).
#include "controller/gate/bootstrap.h"

#include <limits>

#include "controller/gate/rng.h"
#include "controller/gate/robust.h"

namespace blkbench::gate {
namespace {

double CentreOf(const std::vector<double>& x, Centre centre) {
  return centre == Centre::kMedian ? Median(x) : Mean(x);
}

void Resample(const std::vector<double>& from, Rng& rng, std::vector<double>& to) {
  to.resize(from.size());
  for (double& v : to) v = from[rng.Uniform(from.size())];
}

}  // namespace

RelativeChangeInterval BootstrapRelativeChange(const std::vector<double>& base,
                                               const std::vector<double>& cand,
                                               const BootstrapOptions& options) {
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  if (base.empty() || cand.empty() || options.resamples < 1) return {kNaN, kNaN, kNaN};
  RelativeChangeInterval r;
  r.estimate = CentreOf(cand, options.centre) / CentreOf(base, options.centre) - 1.0;

  Rng rng(options.seed);
  std::vector<double> changes;
  changes.reserve(static_cast<size_t>(options.resamples));
  std::vector<double> b;
  std::vector<double> c;
  for (int i = 0; i < options.resamples; ++i) {
    Resample(base, rng, b);
    Resample(cand, rng, c);
    changes.push_back(CentreOf(c, options.centre) / CentreOf(b, options.centre) - 1.0);
  }
  const double tail = (1.0 - options.confidence) / 2.0;
  r.ci_low = Quantile(changes, tail);
  r.ci_high = Quantile(changes, 1.0 - tail);
  return r;
}

}  // namespace blkbench::gate
