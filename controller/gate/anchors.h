// The rules of the tools the gate is measured against (docs/gating.md), on the same
// repeats: LKP's range rule and mmtests' confidence-interval rule. For gate-proof only.
#ifndef BLKBENCH_CONTROLLER_GATE_ANCHORS_H_
#define BLKBENCH_CONTROLLER_GATE_ANCHORS_H_

#include <vector>

#include "controller/gate/verdict.h"

namespace blkbench::gate {

// LKP / kernel test robot (lib/changed_stat.rb, lib/stats.rb): a metric changed when
// the ranges separate — for a drop, max(cand) < mean(base) and mean(cand) < min(base)
// (the mirror for a rise) — with >= 3 repeats on a side and |mean ratio - 1| > 1 %.
// Returns the verdict kRegression, kImprovement, or kNoChange when not "changed".
Verdict LkpRule(const std::vector<double>& base, const std::vector<double>& cand, Direction dir);

// mmtests (Compare.pm, docs/regression-detection.md): harmonic mean for rates
// (higher-is-better), arithmetic otherwise; significant when the difference exceeds the
// sum of both sides' confidence half-widths, each from the 2.5 % and 97.5 % quantiles of
// the mean over random 80 % sub-selections (1000 seeded draws, or every subset when
// there are at most 1000).
Verdict MmtestsRule(const std::vector<double>& base, const std::vector<double>& cand,
                    Direction dir);

}  // namespace blkbench::gate

#endif  // BLKBENCH_CONTROLLER_GATE_ANCHORS_H_
