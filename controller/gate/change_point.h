// Change points in a metric's history (one cell across kernels on one host class):
// E-divisive means (Matteson & James 2014) with a seeded permutation test.
#ifndef BLKBENCH_CONTROLLER_GATE_CHANGE_POINT_H_
#define BLKBENCH_CONTROLLER_GATE_CHANGE_POINT_H_

#include <cstddef>
#include <cstdint>
#include <vector>

namespace blkbench::gate {

// Why E-divisive: it compares whole distributions through the energy distance
//   E(X, Y) = 2 E|X - Y|^a - E|X - X'|^a - E|Y - Y'|^a,   0 < a < 2,
// which is zero only when X and Y are identically distributed, so it sees shifts in
// location and in spread without assuming normality or a number of change points.
// For a segment z[s, e) and split t the statistic is the scaled sample energy
//   Q(t) = (t - s)(e - t) / (e - s) * E_hat(z[s, t), z[t, e)),
// maximised over t with both sides >= min_segment long. O(L^2) per segment via prefix
// updates of the within/between distance sums as t advances.
// Significance: the same maximum over `permutations` random shuffles of the segment;
// p = (1 + #{perm >= observed}) / (permutations + 1). With 199 permutations the
// smallest p is 0.005. A significant split is kept and both halves are searched again
// (recursive bisection). As MongoDB and Apache Otava note, a human should still triage
// the points: the test controls the error of each split, not of the whole history.
struct EDivisiveOptions {
  int permutations = 199;
  double p_threshold = 0.05;  // keep a split when p < p_threshold
  int min_segment = 5;        // fewest points on each side of a change
  double exponent = 1.0;      // a in |x - y|^a, in (0, 2)
  uint64_t seed = 1;
};

struct ChangePoint {
  size_t index = 0;        // first point of the new segment
  double p_value = 1.0;    // permutation p-value of the split within its segment
  double statistic = 0.0;  // Q(t) above
};

// Change points in ascending index order; empty for a series shorter than
// 2 * min_segment. Deterministic in (series, options): each segment's permutations use
// a stream derived from the seed and the segment bounds, not from recursion order.
std::vector<ChangePoint> EDivisive(const std::vector<double>& series,
                                   const EDivisiveOptions& options);

}  // namespace blkbench::gate

#endif  // BLKBENCH_CONTROLLER_GATE_CHANGE_POINT_H_
