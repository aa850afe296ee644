// Noise models for gate-proof (noise_model.h).
#include "controller/gate/noise_model.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "controller/gate/outliers.h"
#include "controller/gate/robust.h"

namespace blkbench::gate {
namespace {

// The normal's upper quartile, to scale a Student t without a variance (df <= 2).
constexpr double kNormalQ3 = 0.6744897501960817;

// Student t with df degrees of freedom: Z / sqrt(chi2_df / df), chi2 from a gamma draw.
double StudentT(double df, Rng& rng) {
  // Marsaglia & Tsang's gamma(df / 2) sampler; chi2_df = 2 gamma(df / 2).
  double shape = df / 2.0;
  double boost = 1.0;
  if (shape < 1.0) {
    boost = std::pow(rng.NextDouble() + 1e-300, 1.0 / shape);
    shape += 1.0;
  }
  const double d = shape - 1.0 / 3.0;
  const double c = 1.0 / std::sqrt(9.0 * d);
  double g = 0.0;
  for (;;) {
    double z, v;
    do {
      z = rng.Gaussian();
      v = 1.0 + c * z;
    } while (v <= 0.0);
    v = v * v * v;
    const double u = rng.NextDouble();
    if (u < 1.0 - 0.0331 * z * z * z * z ||
        std::log(u) < 0.5 * z * z + d * (1.0 - v + std::log(v))) {
      g = d * v * boost;
      break;
    }
  }
  return rng.Gaussian() / std::sqrt(2.0 * g / df);
}

// Upper quartile of Student t_df, by bisection on its CDF (df <= 2 only; cheap enough
// once per side).
double StudentTQ3(double df) {
  if (df == 1.0) return 1.0;  // Cauchy
  if (df == 2.0) return std::sqrt(2.0) / std::sqrt(3.0);
  // Heuristic for other df in (0, 2): interpolate between the two closed forms.
  return df < 1.0 ? 1.0 : 1.0 + (df - 1.0) * (std::sqrt(2.0 / 3.0) - 1.0);
}

double Unit(const NoiseModel& m, Rng& rng) {
  if (!m.residuals.empty()) return m.residuals[rng.Uniform(m.residuals.size())];
  if (m.t_df > 0.0) {
    const double t = StudentT(m.t_df, rng);
    return m.t_df > 2.0 ? t * std::sqrt((m.t_df - 2.0) / m.t_df)
                        : t * kNormalQ3 / StudentTQ3(m.t_df);
  }
  return rng.Gaussian();
}

std::string Num(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", x);
  return buf;
}

}  // namespace

std::string NoiseModel::Describe() const {
  std::vector<std::string> parts;
  if (!residuals.empty())
    parts.push_back(absl::StrCat("fitted residuals (", residuals.size(), ")"));
  if (t_df > 0.0) parts.push_back(absl::StrCat("Student t", Num(t_df)));
  if (outlier_share > 0.0) {
    parts.push_back(absl::StrCat(Num(100 * outlier_share), " % of repeats x", Num(outlier_factor)));
  }
  if (cv_spread > 1.0) parts.push_back(absl::StrCat("cell CVs spread ", Num(cv_spread), "x"));
  if (cv_ratio != 1.0) parts.push_back(absl::StrCat("candidate CV ", Num(cv_ratio), "x"));
  if (drift != 0.0) parts.push_back(absl::StrCat("drift ", Num(100 * drift), " % per side"));
  if (parts.empty()) return "normal";
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : ", ") + p;
  return out;
}

absl::StatusOr<NoiseModel> WithOutliers(NoiseModel m, std::string_view spec_view) {
  const std::string spec(spec_view);
  const size_t x = spec.find('x');
  double share = 0, factor = 0;
  if (x == std::string::npos || !absl::SimpleAtod(spec.substr(0, x), &share) ||
      !absl::SimpleAtod(spec.substr(x + 1), &factor) || !(share >= 0.0 && share < 0.5) ||
      !(factor > 0.0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--outliers: expected SHARExFACTOR with 0 <= SHARE < 0.5 and FACTOR > 0 (e.g. "
                     "0.1x0.7: 10 % of repeats 30 % slow), got '",
                     spec, "'"));
  }
  m.outlier_share = share;
  m.outlier_factor = factor;
  return m;
}

SideCvs DrawCellCvs(const NoiseModel& m, double cv, Rng& rng) {
  SideCvs s{cv, cv};
  if (m.cv_spread > 1.0) s.base = cv * std::pow(m.cv_spread, 2.0 * rng.NextDouble() - 1.0);
  s.cand = s.base * m.cv_ratio;
  if (m.drift != 0.0) s.drift_sign = rng.Bernoulli(0.5) ? 1.0 : -1.0;
  return s;
}

std::vector<double> DrawSide(const NoiseModel& m, double centre, double side_cv, int n, Rng& rng,
                             double drift_sign) {
  std::vector<double> x(static_cast<size_t>(n));
  const double slope = n > 1 ? m.drift * drift_sign : 0.0;
  for (int i = 0; i < n; ++i) {
    double v = centre * (1.0 + side_cv * Unit(m, rng));
    if (slope != 0.0) v *= 1.0 + slope * (static_cast<double>(i) / (n - 1) - 0.5);
    if (m.outlier_share > 0.0 && rng.Bernoulli(m.outlier_share)) v *= m.outlier_factor;
    x[static_cast<size_t>(i)] = std::max(v, centre * 1e-6);
  }
  return x;
}

NoiseModel FitNoiseModel(const std::vector<std::vector<double>>& cells) {
  NoiseModel m;
  std::vector<double> cvs, slopes, outlier_ratios;
  int repeats = 0, outliers = 0;
  const double group_scale = [&] {
    std::vector<const std::vector<double>*> sides;
    for (const auto& c : cells) sides.push_back(&c);
    return OutlierScale(sides);
  }();
  for (const std::vector<double>& all : cells) {
    if (all.size() < 5) continue;
    const std::vector<OutlierFlag> flags = FlagOutliers(all, {}, false, group_scale);
    const std::vector<double> x = WithoutFlagged(all, flags);
    const double med = Median(all);
    for (const OutlierFlag& f : flags) outlier_ratios.push_back(f.value / med);
    outliers += static_cast<int>(flags.size());
    repeats += static_cast<int>(all.size());
    const double mean = Mean(x);
    const double cv = Cv(x);
    if (!(cv > 0.0)) continue;
    cvs.push_back(cv);
    for (double v : x) m.residuals.push_back((v / mean - 1.0) / cv);
    // Least-squares slope of x / mean over the repeat index, as a change first to last.
    const double n = static_cast<double>(all.size());
    double sxy = 0.0, sxx = 0.0;
    for (size_t i = 0; i < all.size(); ++i) {
      const double t = static_cast<double>(i) - (n - 1) / 2;
      sxy += t * (all[i] / mean - 1.0);
      sxx += t * t;
    }
    slopes.push_back(std::fabs(sxy / sxx * (n - 1)));
  }
  std::sort(m.residuals.begin(), m.residuals.end());
  if (repeats > 0) m.outlier_share = static_cast<double>(outliers) / repeats;
  if (!outlier_ratios.empty()) m.outlier_factor = Median(outlier_ratios);
  if (cvs.size() >= 2) {
    m.cv_spread = std::sqrt(*std::max_element(cvs.begin(), cvs.end()) /
                            *std::min_element(cvs.begin(), cvs.end()));
  }
  if (!slopes.empty()) m.drift = Median(slopes);
  return m;
}

}  // namespace blkbench::gate

namespace blkbench::gate {

// Fitted with FitNoiseModel from 8 cells x 30 repeats of 500 ms runs (randread/randwrite
// x 4k/64k x iodepth 1/16, io_uring, direct) on a loop device over a /dev/shm file, on
// this project's shared 2-core build machine:
//   truncate -s 256M /dev/shm/gatefit.img && losetup -f --show /dev/shm/gatefit.img
//   blkbench run bench/gate-proof/noise-fit.yaml --device /dev/loopN --db fit.db
//   blkbench results 1 --db fit.db --format csv  (-> cell,repeat,run,iops:
//                                                 bench/gate-proof/loop-shm-iops.csv)
//   blkbench gate-proof --fit bench/gate-proof/loop-shm-iops.csv
//       (-> controller/gate/fitted_loop_shm.inc)
// The shape is kept (residuals standardized per cell, outlier share and factor by the
// MAD rule of outliers.h); the scale is the table's CV, since the machine's CV (tens of
// percent, a loaded host) says nothing about a quiet test machine.
NoiseModel FittedLoopShmModel() {
  NoiseModel m;
#include "controller/gate/fitted_loop_shm.inc"
  m.name = "fitted: loop over /dev/shm";
  return m;
}

}  // namespace blkbench::gate
