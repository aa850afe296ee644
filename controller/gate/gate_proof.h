// Measuring the gate itself: verdict frequencies of Decide/DecideAll on seeded synthetic
// repeats with known noise and a known true change (false-alarm rate and power). Used by
// `blkbench gate-proof`, which adds engine runs and writes docs/gating.md.
#ifndef BLKBENCH_CONTROLLER_GATE_GATE_PROOF_H_
#define BLKBENCH_CONTROLLER_GATE_GATE_PROOF_H_

#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

#include "controller/gate/noise_model.h"
#include "controller/gate/verdict.h"

namespace blkbench::gate {

// Shapes of run-to-run noise. Each value is centre * (1 + cv * e) with e of sd 1:
//  kNormal           e ~ N(0, 1)
//  kHeavyTailed      e ~ Student t_3 / sqrt(3) (finite variance, 1 in ~70 beyond 3 sd)
//  kOutliers         N(0, 1), and 10 % of repeats hit a slow spike of 5 cv (a cron job,
//                    a throttle) in the bad direction, on both sides alike
//  kHeteroscedastic  N(0, 1) but each cell's cv is cv * 3^u, u ~ U(-1, 1), and the
//                    candidate side's sd is 1.5x the baseline's
enum class NoiseShape { kNormal, kHeavyTailed, kOutliers, kHeteroscedastic };
std::string_view NoiseShapeName(NoiseShape s);

struct SyntheticScenario {
  int repeats = 5;      // per side
  double cv = 0.02;     // run-to-run coefficient of variation
  double change = 0.0;  // true relative change of the candidate (throughput: < 0 is slower)
  NoiseShape shape = NoiseShape::kNormal;
  int cells = 20;  // cells per simulated experiment; they share one noise prior
  // false: each cell is judged on its own p (q = p), i.e. the per-cell rate without any
  // help from Benjamini-Hochberg; true: DecideAll's BH across the experiment's cells.
  bool fdr = false;
  // With fdr: only this many cells carry `change`, the rest none (-1: all of them).
  int changed_cells = -1;
  // With shape kNormal: the noise model (noise_model.h); its default is plain normal
  // noise, drawn exactly as kNormal always was.
  NoiseModel model;
  // --auto-repeat as `blkbench gate` runs it: up to this many extra repeats per side of
  // each inconclusive cell, in rounds that ask for the verdict's repeats_needed at once,
  // each cell judged at its own look (GateOptions::look). 0: one decision.
  int max_extra = 0;
  // Also apply LKP's and mmtests' rules (anchors.h) to the first `repeats`.
  bool anchors = false;
};

struct VerdictRates {
  double regression = 0.0;  // share of (changed, or all when change == 0) cells
  double improvement = 0.0;
  double no_change = 0.0;
  double inconclusive = 0.0;
  int decisions = 0;
  // With changed_cells >= 0 and a change: share of the other (unchanged) cells of the
  // same experiments called a regression.
  double unchanged_regression = 0.0;
  // With anchors: share of the same cells LKP's / mmtests' rule calls a regression.
  double lkp_regression = 0.0;
  double mmtests_regression = 0.0;
  // Repeats per side the counted cells ended with (mean, max): `repeats` without
  // max_extra.
  double mean_repeats = 0.0;
  int max_repeats = 0;
  double outlier_share = 0.0;  // flagged repeats / repeats of the counted cells
};

// Verdicts of `experiments` simulated experiments (throughput metric, higher is better),
// counted over the cells that carry the change (all cells when change is 0).
// Deterministic in (scenario, opts, experiments, seed).
VerdictRates SimulateSynthetic(const SyntheticScenario& scenario, const GateOptions& opts,
                               int experiments, uint64_t seed);

// The same on measured samples: `draw(cell, changed, n, rng_seed)` returns n samples of
// one side of `cell`; cells x experiments decisions. For engine runs (bench/gate-proof).
using SampleSource =
    std::function<std::vector<double>(int cell, bool changed, int n, uint64_t seed)>;
VerdictRates SimulateFromSource(const SampleSource& draw, int cells, int repeats,
                                const GateOptions& opts, int experiments, uint64_t seed);

}  // namespace blkbench::gate

#endif  // BLKBENCH_CONTROLLER_GATE_GATE_PROOF_H_
