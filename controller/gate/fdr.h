// Benjamini-Hochberg false-discovery-rate control across the gate's cells x metrics.
#ifndef BLKBENCH_CONTROLLER_GATE_FDR_H_
#define BLKBENCH_CONTROLLER_GATE_FDR_H_

#include <vector>

namespace blkbench::gate {

// Why BH rather than Bonferroni: a 200-cell matrix x 4 metrics makes 800 tests; at
// p < 0.05 each, ~40 would "regress" by chance. Bonferroni (p < 0.05/800) prevents that
// but also hides real 5 % regressions measured with 5 repeats. BH bounds the expected
// share of false claims among the claims made (FDR <= alpha for independent or positively
// dependent tests, which cells sharing a host and kernel are) and keeps power.
//
// The step-up rule: sort p ascending, q_(i) = min_{j >= i} min(1, m p_(j) / j); reject
// every hypothesis with q <= alpha. NaN p-values count as 1 (never rejected) but still
// count towards m, so a failed cell cannot make the others look better.

// Adjusted p-values (q-values), in the input order. Matches R's p.adjust(p, "BH").
std::vector<double> BenjaminiHochberg(const std::vector<double>& p_values);

// reject[i] is true when hypothesis i is rejected at FDR level alpha.
std::vector<bool> BenjaminiHochbergReject(const std::vector<double>& p_values, double alpha);

}  // namespace blkbench::gate

#endif  // BLKBENCH_CONTROLLER_GATE_FDR_H_
