// The gate's default test (Method::kRobustWelch): outliers set aside by the MAD rule
// (outliers.h), then a Welch test on the ratio of the two sides' means whose per-side
// variances are shrunk towards the noise of the same side of every other cell of the
// metric (empirical Bayes, noise_prior.h, one prior per side).
#ifndef BLKBENCH_CONTROLLER_GATE_ROBUST_WELCH_H_
#define BLKBENCH_CONTROLLER_GATE_ROBUST_WELCH_H_

#include <optional>
#include <vector>

#include "controller/gate/noise_prior.h"

namespace blkbench::gate {

// Why this shape (measured in docs/gating.md, `blkbench gate-proof`):
//  - Welch, not a pooled variance: a candidate kernel may be noisier than the baseline
//    (3x the CV); a pooled variance then has the wrong degrees of freedom and the
//    moderated t's false alarms rose to 1.4 %. Each side keeps its own variance.
//  - One noise prior per side: a candidate that is noisier in every cell gets a prior of
//    its own noise, so pooling still pays (d0 large) instead of collapsing (d0 -> 0 when
//    both sides share one prior).
//  - Difference of arithmetic means, not of log means: with unequal noise the mean of
//    log values moves by -cv^2 / 2 (-0.2 % at 6 % CV, -1.6 % at 18 %), a bias of 0.06 to
//    0.2 standard errors that a 1 % false-alarm budget cannot afford. Both the difference
//    and each side's variance are divided by one reference, the cell's grand mean, so
//    the test is Welch's on the raw values (exact in scale, no bias) and the variances
//    are scale-free for pooling. Dividing each side by its own mean instead (a CV) ties
//    the variance to the mean: a side that happens high looks quieter, which skewed the
//    statistic (improvement false alarms 1.3 % with cell CVs spread 3x).
//  - Outliers set aside (named in the verdict): one 30 % slow repeat among five at 2 % CV
//    multiplies that side's variance by ~40 and took the moderated t's power from 95 % to
//    25 %; the median-based rule finds it at ~18 sigma.

//  - The priors are fitted robustly and not forced on a side they do not describe: a
//    side whose cv^2 is over kWildVariance x the median side's of its kind (a slow
//    majority the outlier rule cannot set aside, a broken run) is left out of the fit,
//    and a side whose cv^2 is improbably large under the prior (F test of s^2 / s0^2 with
//    (n - 1, d0) degrees of freedom, upper tail below kPriorMisfitP) keeps its own
//    variance. Shrinking such a side towards its quiet neighbours is how a pooled test
//    makes false alarms (limma's robust mode answers the same problem, Phipson et al.
//    2016).
inline constexpr double kWildVariance = 25.0;
// The side priors are used at half the fitted d0. Why: d0 from ~20 cells by moments is
// noisy and overshoots when the cells' noise is not scaled inverse chi^2 (CVs spread 3x
// across cells: 1.5 % false alarms at full d0, 1.2 % at half); where noise is even, d0 is
// at its cap (the data's degrees of freedom) and half of it costs 0.5 points of power.
inline constexpr double kPriorStrength = 0.5;
inline constexpr double kPriorMisfitP = 0.01;

// The prior to use for one side with sample variance `s2` on `df` degrees of freedom:
// `prior`, or none when the F test above says the side does not belong to it.
NoisePrior PriorForSide(const NoisePrior& prior, double s2, double df);

// The cell's reference level: the mean of both sides' values (0 when a value is <= 0).
double CellReference(const std::vector<double>& base, const std::vector<double>& cand);

// A side's relative noise: its sample variance over reference^2, with n - 1 degrees of
// freedom; df 0 when fewer than 2 values, a value <= 0 or no reference.
CellNoise SideNoiseOf(const std::vector<double>& x, double reference);

struct WelchEvidence {
  double diff = 0.0;  // (mean cand - mean base) / reference
  double se = 0.0;    // sqrt(v_b~ / n_b + v_c~ / n_c), moderated relative variances
  double df = 0.0;    // Welch-Satterthwaite from each side's d0 + n - 1
  double p_value = 1.0;
  double relative_change = 0.0;  // mean cand / mean base - 1
  double ci_low = 0.0;           // (diff -+ t_{1-alpha, df} se) * reference / mean base
  double ci_high = 0.0;
  double base_cv = 0.0;  // sqrt of the moderated relative variance, per side
  double cand_cv = 0.0;
};

// nullopt when a side is empty, a value is <= 0, or there are no degrees of freedom
// (a single value on a side with no prior). Zero noise on both sides gives p 0 for any
// difference and 1 for none (a deterministic simulation is exact). `alpha` sets the
// interval: 1 - 2 alpha two-sided.
std::optional<WelchEvidence> RobustWelch(const std::vector<double>& base,
                                         const std::vector<double>& cand, double alpha,
                                         const NoisePrior& base_prior,
                                         const NoisePrior& cand_prior);

}  // namespace blkbench::gate

#endif  // BLKBENCH_CONTROLLER_GATE_ROBUST_WELCH_H_
