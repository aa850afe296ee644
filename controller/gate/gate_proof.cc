// Seeded simulations of the gate's verdicts (see gate_proof.h).
#include "controller/gate/gate_proof.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "controller/gate/anchors.h"
#include "controller/gate/rng.h"

namespace blkbench::gate {
namespace {

double StudentT3(Rng& rng) {
  // t_3 = Z / sqrt(chi2_3 / 3).
  double chi2 = 0.0;
  for (int i = 0; i < 3; ++i) {
    const double g = rng.Gaussian();
    chi2 += g * g;
  }
  return rng.Gaussian() / std::sqrt(chi2 / 3.0);
}

double Noise(NoiseShape shape, Rng& rng) {
  switch (shape) {
    case NoiseShape::kHeavyTailed:
      return StudentT3(rng) / std::sqrt(3.0);
    case NoiseShape::kOutliers: {
      const double e = rng.Gaussian();
      return rng.Bernoulli(0.1) ? e - 5.0 : e;
    }
    case NoiseShape::kNormal:
    case NoiseShape::kHeteroscedastic:
      break;
  }
  return rng.Gaussian();
}

std::vector<double> Side(Rng& rng, int n, double centre, double cv, NoiseShape shape) {
  std::vector<double> x(static_cast<size_t>(n));
  for (double& v : x) v = centre * (1.0 + cv * Noise(shape, rng));
  return x;
}

void Count(const CellVerdict& v, VerdictRates& r) {
  ++r.decisions;
  switch (v.verdict) {
    case Verdict::kRegression:
      r.regression += 1;
      break;
    case Verdict::kImprovement:
      r.improvement += 1;
      break;
    case Verdict::kNoChange:
      r.no_change += 1;
      break;
    case Verdict::kInconclusive:
      r.inconclusive += 1;
      break;
  }
}

void Normalize(VerdictRates& r) {
  if (r.decisions == 0) return;
  const double n = r.decisions;
  r.regression /= n;
  r.improvement /= n;
  r.no_change /= n;
  r.inconclusive /= n;
}

// Decides one experiment's cells: DecideAll with BH, or each cell on its own p with the
// noise DecideAll would use.
std::vector<CellVerdict> DecideExperiment(const std::vector<CellInput>& cells,
                                          const GateOptions& opts, bool fdr) {
  return DecideCells(cells, opts, fdr);
}

std::vector<double> Prefix(const std::vector<double>& x, int n) {
  return std::vector<double>(x.begin(), x.begin() + n);
}

// One experiment under --auto-repeat: `full` holds every repeat a cell could get; the
// gate sees the first `have` of each side and asks for more as PlanRepeats does.
std::vector<CellVerdict> DecideWithRepeats(const std::vector<CellInput>& full, int repeats,
                                           int max_extra, GateOptions opts, bool fdr,
                                           std::vector<int>& have) {
  have.assign(full.size(), repeats);
  std::vector<int> looks(full.size(), 0);
  if (max_extra > 0) opts.look = 0;
  for (int round = 1;; ++round) {
    std::vector<CellInput> cells;
    for (size_t i = 0; i < full.size(); ++i) {
      CellInput c = full[i];
      c.base = Prefix(c.base, have[i]);
      c.cand = Prefix(c.cand, have[i]);
      c.look = max_extra > 0 ? looks[i] : -1;
      cells.push_back(std::move(c));
    }
    std::vector<CellVerdict> out = DecideExperiment(cells, opts, fdr);
    bool asked = false;
    for (size_t i = 0; i < out.size() && max_extra > 0; ++i) {
      if (out[i].verdict != Verdict::kInconclusive) continue;
      const int used = have[i] - repeats;
      if (used >= max_extra) continue;
      const int want = std::clamp(out[i].repeats_needed - have[i], 1, max_extra - used);
      have[i] += want;
      looks[i] = round;
      asked = true;
    }
    if (!asked) return out;
  }
}

}  // namespace

std::string_view NoiseShapeName(NoiseShape s) {
  switch (s) {
    case NoiseShape::kNormal:
      return "normal";
    case NoiseShape::kHeavyTailed:
      return "heavy-tailed (t3)";
    case NoiseShape::kOutliers:
      return "10% slow outliers";
    case NoiseShape::kHeteroscedastic:
      return "heteroscedastic";
  }
  return "?";
}

VerdictRates SimulateSynthetic(const SyntheticScenario& s, const GateOptions& opts, int experiments,
                               uint64_t seed) {
  VerdictRates r;
  double unchanged = 0, unchanged_regressions = 0;
  double repeats_sum = 0, flagged = 0, seen = 0;
  const int drawn = s.repeats + s.max_extra;
  for (int e = 0; e < experiments; ++e) {
    Rng rng = Rng(seed).Fork(static_cast<uint64_t>(e));
    std::vector<CellInput> cells;
    std::vector<bool> counted;
    for (int c = 0; c < s.cells; ++c) {
      const bool changed = s.changed_cells < 0 || c < s.changed_cells;
      double base_cv = s.cv;
      double cand_cv = s.cv;
      double drift_sign = 1.0;
      if (s.shape == NoiseShape::kHeteroscedastic) {
        base_cv = s.cv * std::pow(3.0, 2.0 * rng.NextDouble() - 1.0);
        cand_cv = 1.5 * base_cv;
      } else if (s.shape == NoiseShape::kNormal) {
        const SideCvs cvs = DrawCellCvs(s.model, s.cv, rng);
        base_cv = cvs.base;
        cand_cv = cvs.cand;
        drift_sign = cvs.drift_sign;
      }
      const double cand_centre = 100.0 * (1.0 + (changed ? s.change : 0.0));
      CellInput in;
      if (s.shape == NoiseShape::kNormal) {
        in.base = DrawSide(s.model, 100.0, base_cv, drawn, rng, drift_sign);
        in.cand = DrawSide(s.model, cand_centre, cand_cv, drawn, rng, drift_sign);
      } else {
        in.base = Side(rng, drawn, 100.0, base_cv, s.shape);
        in.cand = Side(rng, drawn, cand_centre, cand_cv, s.shape);
      }
      in.direction = Direction::kHigherIsBetter;
      cells.push_back(std::move(in));
      counted.push_back(s.change == 0.0 || changed);
    }
    std::vector<int> have;
    const std::vector<CellVerdict> out =
        DecideWithRepeats(cells, s.repeats, s.max_extra, opts, s.fdr, have);
    for (size_t i = 0; i < out.size(); ++i) {
      if (counted[i]) {
        Count(out[i], r);
        repeats_sum += have[i];
        r.max_repeats = std::max(r.max_repeats, have[i]);
        flagged += static_cast<double>(out[i].outliers.size());
        seen += 2.0 * have[i];
        if (s.anchors) {
          const std::vector<double> b = Prefix(cells[i].base, s.repeats);
          const std::vector<double> c = Prefix(cells[i].cand, s.repeats);
          r.lkp_regression += LkpRule(b, c, cells[i].direction) == Verdict::kRegression;
          r.mmtests_regression += MmtestsRule(b, c, cells[i].direction) == Verdict::kRegression;
        }
      } else {
        ++unchanged;
        unchanged_regressions += out[i].verdict == Verdict::kRegression ? 1 : 0;
      }
    }
  }
  if (r.decisions > 0) {
    r.mean_repeats = repeats_sum / r.decisions;
    r.lkp_regression /= r.decisions;
    r.mmtests_regression /= r.decisions;
    r.outlier_share = seen > 0 ? flagged / seen : 0.0;
  }
  Normalize(r);
  if (unchanged > 0) r.unchanged_regression = unchanged_regressions / unchanged;
  return r;
}

VerdictRates SimulateFromSource(const SampleSource& draw, int cells, int repeats,
                                const GateOptions& opts, int experiments, uint64_t seed) {
  VerdictRates r;
  for (int e = 0; e < experiments; ++e) {
    std::vector<CellInput> in;
    for (int c = 0; c < cells; ++c) {
      const uint64_t s = DeriveSeed(seed, static_cast<uint64_t>(e) * 1000 + c);
      CellInput ci;
      ci.base = draw(c, false, repeats, DeriveSeed(s, 0));
      ci.cand = draw(c, true, repeats, DeriveSeed(s, 1));
      in.push_back(std::move(ci));
    }
    for (const CellVerdict& v : DecideExperiment(in, opts, false)) Count(v, r);
  }
  Normalize(r);
  return r;
}

}  // namespace blkbench::gate
