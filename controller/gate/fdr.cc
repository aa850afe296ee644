// Benjamini-Hochberg step-up q-values (see fdr.h).
#include "controller/gate/fdr.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace blkbench::gate {

std::vector<double> BenjaminiHochberg(const std::vector<double>& p_values) {
  const size_t m = p_values.size();
  std::vector<double> p(m);
  for (size_t i = 0; i < m; ++i) {
    p[i] = std::isnan(p_values[i]) ? 1.0 : std::clamp(p_values[i], 0.0, 1.0);
  }
  std::vector<size_t> order(m);
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return p[a] < p[b]; });
  std::vector<double> q(m);
  double running_min = 1.0;
  for (size_t rank = m; rank >= 1; --rank) {  // step up from the largest p
    const size_t i = order[rank - 1];
    running_min = std::min(running_min, p[i] * static_cast<double>(m) / static_cast<double>(rank));
    q[i] = running_min;
  }
  return q;
}

std::vector<bool> BenjaminiHochbergReject(const std::vector<double>& p_values, double alpha) {
  const std::vector<double> q = BenjaminiHochberg(p_values);
  std::vector<bool> reject(q.size());
  for (size_t i = 0; i < q.size(); ++i) reject[i] = q[i] <= alpha;
  return reject;
}

}  // namespace blkbench::gate
