// Run-to-run noise models for measuring the gate (gate_proof.h, `blkbench gate-proof`):
// outliers, per-side and per-cell CV spread, heavy tails, drift across repeats, and a
// model fitted from real repeated runs. Pure functions of a seeded Rng.
#ifndef BLKBENCH_CONTROLLER_GATE_NOISE_MODEL_H_
#define BLKBENCH_CONTROLLER_GATE_NOISE_MODEL_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "controller/gate/rng.h"

namespace blkbench::gate {

// One repeat of a cell side is centre * (1 + cv_side * e) * drift_i, where
//  e         ~ N(0, 1); or Student t with `t_df` degrees of freedom scaled to sd 1
//              (t_df > 2) or to the normal's interquartile range (t_df <= 2, no variance);
//              or, for a fitted model, a draw from its standardized residuals;
//  cv_side   = cv * 3^(log3(cv_spread) * u), u ~ U(-1, 1) per cell (cv_spread 3: cell CVs
//              from cv/3 to 3 cv, log-uniform), times cv_ratio on the candidate side;
//  drift_i   = 1 + drift * s * (i / (n - 1) - 1/2) for repeat i of the n drawn, s = +-1
//              per cell, the same on both sides (a device warming or filling up while
//              baseline and candidate repeats are interleaved; repeats are no longer
//              independent). A drift that differs between the sides is a real
//              difference of their means, which no gate can tell from a change;
// and with probability outlier_share the repeat is multiplied by outlier_factor (a cron
// job, a throttled CPU: 0.7 = 30 % slow), on both sides alike.
struct NoiseModel {
  std::string name = "normal";
  double outlier_share = 0.0;
  double outlier_factor = 1.0;
  double cv_ratio = 1.0;   // candidate CV / baseline CV
  double cv_spread = 1.0;  // max / typical CV across cells (>= 1)
  double t_df = 0.0;       // 0: normal
  double drift = 0.0;      // relative change from a side's first to its last repeat
  // Fitted model: standardized residuals (mean 0, sd 1) of real repeats, resampled.
  std::vector<double> residuals;

  // One line for tables: "10 % of repeats x0.7", "candidate CV 3x", ...
  std::string Describe() const;
};

// Parses "0.1x0.7" (share x factor) for --outliers. InvalidArgument otherwise; the
// share must be in [0, 0.5) and the factor > 0.
absl::StatusOr<NoiseModel> WithOutliers(NoiseModel m, std::string_view spec);

// The model fitted from repeated short runs on a loop device over /dev/shm (see
// FittedLoopShmModel's comment and docs/gating.md#fitted-noise for the command).
NoiseModel FittedLoopShmModel();

// Fits a model from repeats grouped by cell: each cell's values are standardized
// (x / mean - 1) / cv with its own mean and sd, pooled into `residuals`; repeats the
// MAD rule of outliers.h marks are counted into outlier_share / outlier_factor (median
// of their ratio to the cell median) and kept out of the residuals; cv_spread is
// sqrt(max cv / min cv) over cells; drift the median |slope| over the cell's repeats.
// Cells with fewer than 5 repeats are ignored. The caller sets `name`.
NoiseModel FitNoiseModel(const std::vector<std::vector<double>>& cells);

// Per-cell CVs of both sides (baseline, candidate) for a cell of an experiment with
// typical noise `cv`.
struct SideCvs {
  double base = 0.0;
  double cand = 0.0;
  double drift_sign = 1.0;  // s above
};
SideCvs DrawCellCvs(const NoiseModel& m, double cv, Rng& rng);

// n repeats of one side with mean `centre` and noise `side_cv`.
std::vector<double> DrawSide(const NoiseModel& m, double centre, double side_cv, int n, Rng& rng,
                             double drift_sign = 1.0);

}  // namespace blkbench::gate

#endif  // BLKBENCH_CONTROLLER_GATE_NOISE_MODEL_H_
