// Seeded simulations of the gate's verdicts (see gate_proof.h).
#include "controller/gate/gate_proof.h"

#include <cmath>
#include <limits>

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
// prior DecideAll would use.
std::vector<CellVerdict> DecideExperiment(const std::vector<CellInput>& cells,
                                          const GateOptions& opts, bool fdr) {
  if (fdr) return DecideAll(cells, opts);
  std::vector<CellNoise> noise;
  for (const CellInput& c : cells) noise.push_back(CellNoiseOf(c.base, c.cand));
  const NoisePrior prior =
      opts.method == Method::kModeratedT ? EstimateNoisePrior(noise) : NoisePrior();
  std::vector<CellVerdict> out;
  for (const CellInput& c : cells) {
    out.push_back(
        Decide(c.base, c.cand, c.direction, opts, std::numeric_limits<double>::quiet_NaN(), prior));
  }
  return out;
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
  for (int e = 0; e < experiments; ++e) {
    Rng rng = Rng(seed).Fork(static_cast<uint64_t>(e));
    std::vector<CellInput> cells;
    std::vector<bool> counted;
    for (int c = 0; c < s.cells; ++c) {
      const bool changed = s.changed_cells < 0 || c < s.changed_cells;
      double base_cv = s.cv;
      double cand_cv = s.cv;
      if (s.shape == NoiseShape::kHeteroscedastic) {
        base_cv = s.cv * std::pow(3.0, 2.0 * rng.NextDouble() - 1.0);
        cand_cv = 1.5 * base_cv;
      }
      const double cand_centre = 100.0 * (1.0 + (changed ? s.change : 0.0));
      CellInput in;
      in.base = Side(rng, s.repeats, 100.0, base_cv, s.shape);
      in.cand = Side(rng, s.repeats, cand_centre, cand_cv, s.shape);
      in.direction = Direction::kHigherIsBetter;
      cells.push_back(std::move(in));
      counted.push_back(s.change == 0.0 || changed);
    }
    const std::vector<CellVerdict> out = DecideExperiment(cells, opts, s.fdr);
    for (size_t i = 0; i < out.size(); ++i) {
      if (counted[i]) {
        Count(out[i], r);
      } else {
        ++unchanged;
        unchanged_regressions += out[i].verdict == Verdict::kRegression ? 1 : 0;
      }
    }
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
