// Welch test on the ratio of means with per-side moderated variances (robust_welch.h).
#include "controller/gate/robust_welch.h"

#include <cmath>

#include "controller/gate/distributions.h"

namespace blkbench::gate {

NoisePrior PriorForSide(const NoisePrior& prior, double s2, double df) {
  if (!(prior.df > 0.0) || !(prior.variance > 0.0) || !(df >= 1.0)) return prior;
  // P(F > f) for F(df, d0) = I_x(d0 / 2, df / 2) with x = d0 / (d0 + df f).
  const double f = s2 / prior.variance;
  const double upper =
      RegularizedIncompleteBeta(prior.df / (prior.df + df * f), prior.df / 2, df / 2);
  return upper < kPriorMisfitP ? NoisePrior() : prior;
}

double CellReference(const std::vector<double>& base, const std::vector<double>& cand) {
  double sum = 0.0;
  size_t n = 0;
  for (const std::vector<double>* x : {&base, &cand}) {
    for (double v : *x) {
      if (!(v > 0.0) || !std::isfinite(v)) return 0.0;
      sum += v;
      ++n;
    }
  }
  return n == 0 ? 0.0 : sum / static_cast<double>(n);
}

CellNoise SideNoiseOf(const std::vector<double>& x, double reference) {
  if (x.size() < 2 || !(reference > 0.0)) return {};
  double sum = 0.0;
  for (double v : x) {
    if (!(v > 0.0) || !std::isfinite(v)) return {};
    sum += v;
  }
  const double mean = sum / static_cast<double>(x.size());
  double ss = 0.0;
  for (double v : x) ss += (v - mean) * (v - mean);
  const double df = static_cast<double>(x.size()) - 1.0;
  return {ss / df / (reference * reference), df};
}

std::optional<WelchEvidence> RobustWelch(const std::vector<double>& base,
                                         const std::vector<double>& cand, double alpha,
                                         const NoisePrior& base_prior,
                                         const NoisePrior& cand_prior) {
  const double ref = CellReference(base, cand);
  if (base.empty() || cand.empty() || !(ref > 0.0)) return std::nullopt;
  double means[2] = {0.0, 0.0};
  int k = 0;
  for (const std::vector<double>* x : {&base, &cand}) {
    double sum = 0.0;
    for (double v : *x) sum += v;
    means[k++] = sum / static_cast<double>(x->size());
  }
  const CellNoise nb = SideNoiseOf(base, ref);
  const CellNoise nc = SideNoiseOf(cand, ref);
  const NoisePrior pb = PriorForSide(base_prior, nb.variance, nb.df);
  const NoisePrior pc = PriorForSide(cand_prior, nc.variance, nc.df);
  const double df_b = pb.df + nb.df;
  const double df_c = pc.df + nc.df;
  if (!(df_b >= 1.0) || !(df_c >= 1.0)) return std::nullopt;
  const double vb = ModeratedVariance(pb, nb.variance, nb.df);
  const double vc = ModeratedVariance(pc, nc.variance, nc.df);
  WelchEvidence w;
  w.base_cv = std::sqrt(vb);
  w.cand_cv = std::sqrt(vc);
  w.diff = (means[1] - means[0]) / ref;
  const double ub = vb / static_cast<double>(base.size());
  const double uc = vc / static_cast<double>(cand.size());
  w.se = std::sqrt(ub + uc);
  double half = 0.0;
  if (w.se > 0.0) {
    w.df = (ub + uc) * (ub + uc) / (ub * ub / df_b + uc * uc / df_c);
    w.p_value = 2.0 * StudentTUpperTail(std::fabs(w.diff) / w.se, w.df);
    half = StudentTQuantile(1.0 - alpha, w.df) * w.se;
  } else {
    w.df = df_b + df_c;
    w.p_value = w.diff == 0.0 ? 1.0 : 0.0;
  }
  // Relative to the baseline mean (its own uncertainty is second order at these CVs).
  const double to_base = ref / means[0];
  w.relative_change = means[1] / means[0] - 1.0;
  w.ci_low = (w.diff - half) * to_base;
  w.ci_high = (w.diff + half) * to_base;
  return w;
}

}  // namespace blkbench::gate
