// Pooled noise for the gate's moderated t-test: one prior for the log-scale variance of
// a metric, estimated from every cell of an experiment (empirical Bayes, as limma's
// squeezeVar / fitFDist), that shrinks each cell's own few-repeat variance.
#ifndef BLKBENCH_CONTROLLER_GATE_NOISE_PRIOR_H_
#define BLKBENCH_CONTROLLER_GATE_NOISE_PRIOR_H_

#include <vector>

namespace blkbench::gate {

// Why pool: with 5 repeats per side a cell's own variance has 8 degrees of freedom, so a
// t-test must use t_8 quantiles (2.90 instead of 2.33 at one-sided 1 %), and no test with
// a per-cell variance reaches 95 % power for a 5 % change at 2 % CV. But the cells of one
// matrix share machines, kernels and a metric, so their noise levels are related. The
// model (Smyth 2004): each cell's true variance sigma_i^2 is drawn from a scaled inverse
// chi-square with d0 degrees of freedom around s0^2, and the cell's sample variance
// s_i^2 given sigma_i^2 is sigma_i^2 chi^2_{d_i} / d_i. Then the posterior variance
//   s~_i^2 = (d0 s0^2 + d_i s_i^2) / (d0 + d_i)
// gives t = diff / (s~_i sqrt(1/n1 + 1/n2)) an exact Student t null with d0 + d_i
// degrees of freedom. d0 is estimated from how much the log s_i^2 scatter beyond what
// chi-square sampling alone explains: little scatter (cells equally noisy) gives a large
// d0 and strong pooling; heteroscedastic cells give a small d0 and each cell keeps
// mostly its own variance, which keeps false alarms honest.
//
// Method of moments on e_i = log s_i^2 - digamma(d_i/2) + log(d_i/2):
//   mean(e) = log s0^2 - digamma(d0/2) + log(d0/2),
//   var(e) - mean(trigamma(d_i/2)) = trigamma(d0/2).
// If the excess variance is <= 0, d0 is unbounded; it is capped at the total degrees of
// freedom of the cells it came from (the prior cannot know more than its data).

struct CellNoise {
  double variance = 0.0;  // sample variance of log values (pooled over both sides)
  double df = 0.0;        // its degrees of freedom (n1 + n2 - 2)
};

struct NoisePrior {
  double df = 0.0;        // d0; 0 means no prior (each cell uses its own variance)
  double variance = 0.0;  // s0^2
  int cells = 0;          // cells with a positive variance it was estimated from
};

// Cells with fewer than 1 degree of freedom or a zero variance (e.g. a deterministic
// simulation) are ignored. Fewer than kMinPriorCells usable cells give no prior.
inline constexpr int kMinPriorCells = 3;
NoisePrior EstimateNoisePrior(const std::vector<CellNoise>& cells);

// (d0 s0^2 + d s^2) / (d0 + d); `s2` when the prior has df 0.
double ModeratedVariance(const NoisePrior& prior, double s2, double df);

// Special functions the estimate needs, exposed for tests. x > 0.
double Digamma(double x);
double Trigamma(double x);
// x with Trigamma(x) == y, for y > 0.
double TrigammaInverse(double y);

}  // namespace blkbench::gate

#endif  // BLKBENCH_CONTROLLER_GATE_NOISE_PRIOR_H_
