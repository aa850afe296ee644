// Decide(): combines an interval (moderated t or Hodges-Lehmann), a p-value, the rank-sum
// check, BH q and min_effect into a verdict (verdict.h).
#include "controller/gate/verdict.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <numbers>
#include <optional>

#include "controller/gate/distributions.h"
#include "controller/gate/fdr.h"
#include "controller/gate/hodges_lehmann.h"
#include "controller/gate/rank_sum.h"
#include "controller/gate/robust.h"
#include "controller/gate/robust_welch.h"

namespace blkbench::gate {
namespace {

constexpr double kPlanningPower = 0.8;
// Variance of the rank-based estimate relative to the difference of means on normal
// data: 1 / (3 / pi), the Mann-Whitney test's asymptotic relative efficiency.
constexpr double kRankVarianceInflation = std::numbers::pi / 3.0;

std::string Percent(double fraction) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%+.1f%%", 100.0 * fraction);
  return buf;
}

// Pooled standard deviation of log values (~ the CV for small noise), or the pooled CV
// when some value is non-positive.
double PooledNoise(const std::vector<double>& base, const std::vector<double>& cand) {
  auto side = [](const std::vector<double>& x) -> std::optional<double> {
    if (x.size() < 2) return std::nullopt;
    std::vector<double> l;
    for (double v : x) {
      if (!(v > 0.0)) return Cv(x);
      l.push_back(std::log(v));
    }
    return StdDev(l);
  };
  const std::optional<double> sb = side(base);
  const std::optional<double> sc = side(cand);
  if (!sb && !sc) return 0.0;
  if (!sb) return *sc;
  if (!sc) return *sb;
  const double db = static_cast<double>(base.size() - 1);
  const double dc = static_cast<double>(cand.size() - 1);
  return std::sqrt(((*sb) * (*sb) * db + (*sc) * (*sc) * dc) / (db + dc));
}

// Smallest n per side for which an exact two-sided rank-sum p-value can reach alpha:
// the most extreme arrangement has probability 2 / C(2n, n).
int SmallestUsefulN(double alpha) {
  double arrangements = 2.0;  // C(2, 1)
  for (int n = 1; n < 64; ++n) {
    if (2.0 / arrangements <= alpha) return n;
    arrangements *= (2.0 * n + 1.0) * (2.0 * n + 2.0) / ((n + 1.0) * (n + 1.0));
  }
  return 64;
}

// Repeats per side so that the interval half-width (~ z_{1-a} * noise * sqrt(2/n)) is
// smaller than the distance `d` from the estimate to the boundary that would settle the
// cell, with 80 % power: n = 2 (z_{1-a} + z_power)^2 (noise / d)^2 * pi/3. A claim of
// change needs one bound to clear (z_power = z_{0.8}); "no change" needs both bounds
// inside +-m (TOST), so each must clear with 90 % (z_{0.9}). Checked by simulation: at
// 2 % CV and no true change it asks for 18, which settle 78 % of cells.
int RepeatsNeeded(double change, double noise, double inflation, int useful_n,
                  const GateOptions& opts) {
  const double m = opts.min_effect;
  const double mag = std::fabs(change);
  const bool towards_change = mag >= m;
  double d = towards_change ? (opts.strict ? mag - m : mag) : m - mag;
  d = std::max(d, m / 4.0);  // an estimate sitting on a boundary would ask for infinity
  const double power = towards_change ? kPlanningPower : 0.5 + kPlanningPower / 2.0;
  // Sequential (--auto-repeat): plan for the level of the next look, one-sided.
  double level = opts.alpha;
  if (opts.look >= 0 && towards_change) {
    GateOptions next = opts;
    ++next.look;
    level = next.ClaimAlpha() / 2.0;
  }
  const double z = NormalQuantile(1.0 - level) + NormalQuantile(power);
  const double n = 2.0 * z * z * (noise / d) * (noise / d) * inflation;
  const int floor = std::max(opts.min_repeats, useful_n);
  if (!(n < opts.max_repeats)) return opts.max_repeats;
  return std::clamp(static_cast<int>(std::ceil(n)), floor, std::max(floor, opts.max_repeats));
}

std::string Headline(const CellVerdict& v, Direction dir, const GateOptions& opts) {
  char buf[320];
  const char* better = dir == Direction::kHigherIsBetter ? "higher" : "lower";
  const std::string ci = "[" + Percent(v.ci_low) + ", " + Percent(v.ci_high) + "]";
  switch (v.verdict) {
    case Verdict::kRegression:
    case Verdict::kImprovement:
      std::snprintf(buf, sizeof buf,
                    "%s %s (%s is better): %.0f%% CI %s, p=%.2g q=%.2g rank p=%.2g, %d vs %d "
                    "repeats, cv %.1f%%/%.1f%%",
                    Percent(v.relative_change).c_str(), std::string(VerdictName(v.verdict)).c_str(),
                    better, 100.0 * v.ci_confidence, ci.c_str(), v.p_value, v.q_value,
                    v.rank_p_value, v.base_repeats, v.cand_repeats, 100.0 * v.base_cv,
                    100.0 * v.cand_cv);
      break;
    case Verdict::kNoChange:
      std::snprintf(buf, sizeof buf,
                    "no change: %s, %.0f%% CI %s within +-%.1f%%, %d vs %d repeats",
                    Percent(v.relative_change).c_str(), 100.0 * v.ci_confidence, ci.c_str(),
                    100.0 * opts.min_effect, v.base_repeats, v.cand_repeats);
      break;
    case Verdict::kInconclusive:
      if (std::min(v.base_repeats, v.cand_repeats) < opts.min_repeats) {
        std::snprintf(buf, sizeof buf,
                      "inconclusive: %d vs %d repeats, at least %d per side required",
                      v.base_repeats, v.cand_repeats, opts.min_repeats);
      } else if (std::isnan(v.relative_change)) {
        std::snprintf(buf, sizeof buf,
                      "inconclusive: no relative change (baseline median %.4g), %d vs %d repeats",
                      v.base_centre, v.base_repeats, v.cand_repeats);
      } else {
        std::snprintf(buf, sizeof buf,
                      "inconclusive: %s, %.0f%% CI %s, p=%.2g q=%.2g rank p=%.2g, cv "
                      "%.1f%%/%.1f%%; ~%d repeats per side needed",
                      Percent(v.relative_change).c_str(), 100.0 * v.ci_confidence, ci.c_str(),
                      v.p_value, v.q_value, v.rank_p_value, 100.0 * v.base_cv, 100.0 * v.cand_cv,
                      v.repeats_needed);
      }
      break;
  }
  std::string line = buf;
  if (!v.outliers.empty()) {
    int b = 0;
    for (const OutlierFlag& f : v.outliers) b += f.candidate ? 0 : 1;
    line += "; outliers set aside: " + std::to_string(b) + " baseline, " +
            std::to_string(static_cast<int>(v.outliers.size()) - b) + " candidate";
  }
  return line;
}

double RankP(const std::vector<double>& base, const std::vector<double>& cand,
             const GateOptions& opts) {
  const RankSumResult r = MannWhitneyTest(cand, base);
  return opts.mid_p ? r.mid_p_value : r.p_value;
}

// Means and pooled within-side variance of log values; nullopt when a value is <= 0 or
// a side is empty. df = n1 + n2 - 2 (0 with a single value per side: no variance).
struct LogMoments {
  double diff = 0.0;  // mean(log cand) - mean(log base)
  double s2 = 0.0;
  double df = 0.0;
};

std::optional<LogMoments> LogMomentsOf(const std::vector<double>& base,
                                       const std::vector<double>& cand) {
  if (base.empty() || cand.empty()) return std::nullopt;
  double ss = 0.0;
  double means[2] = {0.0, 0.0};
  int side = 0;
  for (const std::vector<double>* x : {&base, &cand}) {
    double sum = 0.0;
    for (double v : *x) {
      if (!(v > 0.0) || !std::isfinite(v)) return std::nullopt;
      sum += std::log(v);
    }
    const double mean = sum / static_cast<double>(x->size());
    for (double v : *x) ss += (std::log(v) - mean) * (std::log(v) - mean);
    means[side++] = mean;
  }
  LogMoments m;
  m.diff = means[1] - means[0];
  m.df = static_cast<double>(base.size() + cand.size()) - 2.0;
  m.s2 = m.df > 0.0 ? ss / m.df : 0.0;
  return m;
}

// The moderated t-test's evidence for one cell.
struct TEvidence {
  double diff = 0.0;  // of log means
  double sd = 0.0;    // sqrt of the moderated variance
  double df = 0.0;
  double p_value = 1.0;
  double relative_change = 0.0;
  double ci_low = 0.0;
  double ci_high = 0.0;
};

// nullopt when the t-test cannot be formed: a value <= 0, or no degrees of freedom at
// all (one repeat per side and no prior).
std::optional<TEvidence> ModeratedT(const std::vector<double>& base,
                                    const std::vector<double>& cand, const GateOptions& opts,
                                    const NoisePrior& prior) {
  const std::optional<LogMoments> m = LogMomentsOf(base, cand);
  if (!m) return std::nullopt;
  TEvidence t;
  t.df = prior.df + m->df;
  if (!(t.df >= 1.0)) return std::nullopt;
  t.diff = m->diff;
  const double s2 = ModeratedVariance(prior, m->s2, m->df);
  t.sd = std::sqrt(s2);
  const double se = t.sd * std::sqrt(1.0 / static_cast<double>(base.size()) +
                                     1.0 / static_cast<double>(cand.size()));
  double half = 0.0;
  if (se > 0.0) {
    t.p_value = 2.0 * StudentTUpperTail(std::fabs(t.diff) / se, t.df);
    half = StudentTQuantile(1.0 - opts.alpha, t.df) * se;
  } else {
    // No noise at all (e.g. a deterministic simulation): any difference is exact.
    t.p_value = t.diff == 0.0 ? 1.0 : 0.0;
  }
  t.relative_change = std::expm1(t.diff);
  t.ci_low = std::expm1(t.diff - half);
  t.ci_high = std::expm1(t.diff + half);
  return t;
}

}  // namespace

std::string_view MethodName(Method m) {
  switch (m) {
    case Method::kRobustWelch:
      return "robust-welch";
    case Method::kModeratedT:
      return "moderated-t";
    case Method::kRankSum:
      break;
  }
  return "rank-sum";
}

double GateOptions::ClaimAlpha() const {
  if (look < 0) return alpha;
  if (look == 0) return 0.75 * alpha;
  return 0.25 * alpha * std::ldexp(1.0, -look);
}

std::string_view VerdictName(Verdict v) {
  switch (v) {
    case Verdict::kRegression:
      return "regression";
    case Verdict::kImprovement:
      return "improvement";
    case Verdict::kNoChange:
      return "no change";
    case Verdict::kInconclusive:
      return "inconclusive";
  }
  return "unknown";
}

double CellPValue(const std::vector<double>& base, const std::vector<double>& cand,
                  const GateOptions& opts, const NoisePrior& prior) {
  GroupNoise noise;
  noise.pooled = prior;
  return CellPValueInGroup(base, cand, opts, noise);
}

double CellPValueInGroup(const std::vector<double>& base, const std::vector<double>& cand,
                         const GateOptions& opts, const GroupNoise& noise) {
  if (opts.method == Method::kRobustWelch) {
    const std::vector<double> b =
        WithoutFlagged(base, FlagOutliers(base, cand, false, noise.base_scale));
    const std::vector<double> c =
        WithoutFlagged(cand, FlagOutliers(cand, base, true, noise.cand_scale));
    if (const auto w = RobustWelch(b, c, opts.alpha, noise.base, noise.cand)) return w->p_value;
    return RankP(b, c, opts);
  }
  if (opts.method == Method::kModeratedT) {
    if (const std::optional<TEvidence> t = ModeratedT(base, cand, opts, noise.pooled)) {
      return t->p_value;
    }
  }
  return RankP(base, cand, opts);
}

CellNoise CellNoiseOf(const std::vector<double>& base, const std::vector<double>& cand) {
  const std::optional<LogMoments> m = LogMomentsOf(base, cand);
  if (!m || base.size() + cand.size() < 3) return {};
  return {m->s2, m->df};
}

CellVerdict Decide(const std::vector<double>& base, const std::vector<double>& cand, Direction dir,
                   const GateOptions& opts, double q_value, const NoisePrior& prior) {
  GroupNoise noise;
  noise.pooled = prior;
  return DecideInGroup(base, cand, dir, opts, q_value, noise);
}

CellVerdict DecideInGroup(const std::vector<double>& all_base, const std::vector<double>& all_cand,
                          Direction dir, const GateOptions& opts, double q_value,
                          const GroupNoise& noise) {
  CellVerdict v;
  // kRobustWelch: outliers are set aside, and named, before anything else.
  std::vector<double> kept_base, kept_cand;
  if (opts.method == Method::kRobustWelch) {
    v.outliers = FlagOutliers(all_base, all_cand, false, noise.base_scale);
    kept_base = WithoutFlagged(all_base, v.outliers);
    const std::vector<OutlierFlag> fc = FlagOutliers(all_cand, all_base, true, noise.cand_scale);
    kept_cand = WithoutFlagged(all_cand, fc);
    v.outliers.insert(v.outliers.end(), fc.begin(), fc.end());
  }
  const std::vector<double>& base = v.outliers.empty() ? all_base : kept_base;
  const std::vector<double>& cand = v.outliers.empty() ? all_cand : kept_cand;
  const NoisePrior& prior = noise.pooled;
  v.base_repeats = static_cast<int>(base.size());
  v.cand_repeats = static_cast<int>(cand.size());
  v.base_centre = Median(base);
  v.cand_centre = Median(cand);
  v.base_cv = Cv(base);
  v.cand_cv = Cv(cand);
  const RankSumResult rank = MannWhitneyTest(cand, base);
  v.rank_p_value = opts.mid_p ? rank.mid_p_value : rank.p_value;

  const double confidence = 1.0 - 2.0 * opts.alpha;
  bool have_change = false;
  bool claim_ok = true;  // the rank check of kModeratedT
  double inflation = kRankVarianceInflation;
  int useful_n = SmallestUsefulN(opts.alpha);
  std::optional<TEvidence> t;
  if (opts.method == Method::kModeratedT) t = ModeratedT(base, cand, opts, prior);
  if (opts.method == Method::kRobustWelch) {
    if (const auto w = RobustWelch(base, cand, opts.alpha, noise.base, noise.cand)) {
      t = TEvidence{w->diff,
                    std::sqrt(0.5 * (w->base_cv * w->base_cv + w->cand_cv * w->cand_cv)),
                    w->df,
                    w->p_value,
                    w->relative_change,
                    w->ci_low,
                    w->ci_high};
    }
  }
  if (t) {
    v.method = opts.method;
    v.p_value = t->p_value;
    v.relative_change = t->relative_change;
    v.ci_low = t->ci_low;
    v.ci_high = t->ci_high;
    v.ci_confidence = confidence;
    v.t_df = t->df;
    v.noise = t->sd;
    have_change = true;
    // The rank statistic must point the same way as the t estimate and reach its level.
    const double mid = 0.5 * static_cast<double>(base.size() * cand.size());
    const bool same_side = (rank.u - mid) * t->diff > 0.0;
    claim_ok = same_side && v.rank_p_value <= opts.rank_check_alpha;
    inflation = 1.0;
    useful_n = SmallestUsefulN(opts.rank_check_alpha);
  } else {
    v.method = Method::kRankSum;
    v.p_value = v.rank_p_value;
    if (const auto ratio = HodgesLehmannRatio(base, cand, confidence)) {
      v.relative_change = ratio->estimate - 1.0;
      v.ci_low = ratio->ci_low - 1.0;
      v.ci_high = ratio->ci_high - 1.0;
      v.ci_confidence = ratio->confidence;
      have_change = true;
    } else if (!base.empty() && !cand.empty() && v.base_centre > 0.0) {
      // Some value is <= 0 (rare for IOPS or latency): scale the shift by the base median.
      const ShiftEstimate s = HodgesLehmannShift(base, cand, confidence);
      v.relative_change = s.estimate / v.base_centre;
      v.ci_low = s.ci_low / v.base_centre;
      v.ci_high = s.ci_high / v.base_centre;
      v.ci_confidence = s.confidence;
      have_change = true;
    }
    v.noise = PooledNoise(base, cand);
    if (opts.method != Method::kRankSum && LogMomentsOf(base, cand)) {
      // Too few repeats for a variance yet: plan for the t-test more repeats will allow.
      inflation = 1.0;
      useful_n = SmallestUsefulN(opts.rank_check_alpha);
    }
  }
  v.q_value = std::isnan(q_value) ? v.p_value : q_value;
  if (!have_change) {
    v.relative_change = v.ci_low = v.ci_high = std::numeric_limits<double>::quiet_NaN();
  }

  const bool enough = v.base_repeats >= opts.min_repeats && v.cand_repeats >= opts.min_repeats;
  if (enough && have_change) {
    const double m = opts.min_effect;
    // "worse" is the relative change signed so that positive means worse.
    const double sign = dir == Direction::kHigherIsBetter ? -1.0 : 1.0;
    const double worse = sign * v.relative_change;
    const double worse_lo = std::min(sign * v.ci_low, sign * v.ci_high);
    const double worse_hi = std::max(sign * v.ci_low, sign * v.ci_high);
    const bool guard = v.q_value <= opts.ClaimAlpha() && claim_ok;
    if (guard && worse_lo > (opts.strict ? m : 0.0) && worse >= m) {
      v.verdict = Verdict::kRegression;
    } else if (guard && worse_hi < (opts.strict ? -m : 0.0) && worse <= -m) {
      v.verdict = Verdict::kImprovement;
    } else if (v.ci_low >= -m && v.ci_high <= m) {
      v.verdict = Verdict::kNoChange;
    }
  }
  if (v.verdict == Verdict::kInconclusive) {
    v.repeats_needed =
        RepeatsNeeded(have_change ? v.relative_change : 0.0, v.noise, inflation, useful_n, opts);
    if (enough) {
      v.repeats_needed =
          std::min(opts.max_repeats,
                   std::max(v.repeats_needed, std::max(v.base_repeats, v.cand_repeats) + 1));
    }
  }
  v.headline = Headline(v, dir, opts);
  return v;
}

std::map<int, GroupNoise> EstimateGroupNoise(const std::vector<CellInput>& cells,
                                             const GateOptions& opts) {
  std::map<int, GroupNoise> out;
  if (opts.method == Method::kRankSum) {
    for (const CellInput& c : cells) out[c.group];
    return out;
  }
  if (opts.method == Method::kModeratedT) {
    std::map<int, std::vector<CellNoise>> noise;
    for (const CellInput& c : cells) noise[c.group].push_back(CellNoiseOf(c.base, c.cand));
    for (const auto& [group, list] : noise) out[group].pooled = EstimateNoisePrior(list);
    return out;
  }
  // kRobustWelch: outlier scales per side kind first, then each side's noise without its
  // outliers, then one prior per side kind.
  std::map<int, std::vector<const std::vector<double>*>> bases, cands;
  for (const CellInput& c : cells) {
    bases[c.group].push_back(&c.base);
    cands[c.group].push_back(&c.cand);
  }
  for (const auto& [group, list] : bases) {
    out[group].base_scale = OutlierScale(list);
    out[group].cand_scale = OutlierScale(cands[group]);
  }
  std::map<int, std::vector<CellNoise>> bn, cn;
  for (const CellInput& c : cells) {
    const GroupNoise& g = out[c.group];
    const std::vector<double> b =
        WithoutFlagged(c.base, FlagOutliers(c.base, c.cand, false, g.base_scale));
    const std::vector<double> k =
        WithoutFlagged(c.cand, FlagOutliers(c.cand, c.base, true, g.cand_scale));
    const double ref = CellReference(b, k);
    bn[c.group].push_back(SideNoiseOf(b, ref));
    cn[c.group].push_back(SideNoiseOf(k, ref));
  }
  // Wild sides (kWildVariance x the median of their kind) stay out of the fit.
  auto fit = [](std::vector<CellNoise> sides) {
    std::vector<double> v;
    for (const CellNoise& n : sides) {
      if (n.df >= 1.0 && n.variance > 0.0) v.push_back(n.variance);
    }
    if (v.empty()) return NoisePrior();
    const double limit = kWildVariance * Median(v);
    std::erase_if(sides, [limit](const CellNoise& n) { return n.variance > limit; });
    return EstimateNoisePrior(sides);
  };
  for (auto& [group, g] : out) {
    g.base = fit(bn[group]);
    g.cand = fit(cn[group]);
    g.base.df *= kPriorStrength;
    g.cand.df *= kPriorStrength;
  }
  return out;
}

std::vector<CellVerdict> DecideCells(const std::vector<CellInput>& cells, const GateOptions& opts,
                                     bool fdr) {
  const std::map<int, GroupNoise> noise = EstimateGroupNoise(cells, opts);
  std::vector<double> q(cells.size(), std::numeric_limits<double>::quiet_NaN());
  if (fdr) {
    std::vector<double> p;
    p.reserve(cells.size());
    for (const CellInput& c : cells) {
      p.push_back(CellPValueInGroup(c.base, c.cand, opts, noise.at(c.group)));
    }
    q = BenjaminiHochberg(p);
  }
  std::vector<CellVerdict> out;
  out.reserve(cells.size());
  for (size_t i = 0; i < cells.size(); ++i) {
    GateOptions o = opts;
    if (cells[i].look >= 0) o.look = cells[i].look;
    out.push_back(DecideInGroup(cells[i].base, cells[i].cand, cells[i].direction, o, q[i],
                                noise.at(cells[i].group)));
  }
  return out;
}

std::vector<CellVerdict> DecideAll(const std::vector<CellInput>& cells, const GateOptions& opts) {
  return DecideCells(cells, opts, true);
}

}  // namespace blkbench::gate
