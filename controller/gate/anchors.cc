// LKP's and mmtests' change rules (anchors.h).
#include "controller/gate/anchors.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "controller/gate/rng.h"
#include "controller/gate/robust.h"

namespace blkbench::gate {
namespace {

Verdict Signed(bool dropped, Direction dir) {
  const bool worse = (dir == Direction::kHigherIsBetter) == dropped;
  return worse ? Verdict::kRegression : Verdict::kImprovement;
}

double Location(const std::vector<double>& x, bool harmonic) {
  if (!harmonic) return Mean(x);
  double inv = 0.0;
  for (double v : x) inv += 1.0 / v;
  return static_cast<double>(x.size()) / inv;
}

// Half-width of mmtests' interval of one side's location.
double HalfWidth(const std::vector<double>& x, bool harmonic) {
  const size_t n = x.size();
  const size_t k =
      std::max<size_t>(1, static_cast<size_t>(std::ceil(0.8 * static_cast<double>(n))));
  std::vector<double> locs;
  // Every k-subset when C(n, k) <= 1000 (n <= 10 at 80 %): the limit of many draws.
  double combos = 1.0;
  for (size_t i = 0; i < n - k; ++i) combos = combos * static_cast<double>(n - i) / (i + 1.0);
  std::vector<double> sub;
  if (combos <= 1000.0) {
    std::vector<bool> pick(n, false);
    std::fill(pick.begin(), pick.begin() + static_cast<long>(k), true);
    do {
      sub.clear();
      for (size_t i = 0; i < n; ++i) {
        if (pick[i]) sub.push_back(x[i]);
      }
      locs.push_back(Location(sub, harmonic));
    } while (std::prev_permutation(pick.begin(), pick.end()));
  } else {
    uint64_t seed = n;
    for (double v : x) seed = DeriveSeed(seed, static_cast<uint64_t>(v * 1e6));
    Rng rng(seed);
    std::vector<double> p = x;
    for (int d = 0; d < 1000; ++d) {
      for (size_t i = 0; i < k; ++i) std::swap(p[i], p[i + rng.Uniform(n - i)]);
      locs.push_back(
          Location(std::vector<double>(p.begin(), p.begin() + static_cast<long>(k)), harmonic));
    }
  }
  return 0.5 * (Quantile(locs, 0.975) - Quantile(locs, 0.025));
}

}  // namespace

Verdict LkpRule(const std::vector<double>& base, const std::vector<double>& cand, Direction dir) {
  if (base.empty() || cand.empty() || std::max(base.size(), cand.size()) < 3) {
    return Verdict::kNoChange;
  }
  const double mb = Mean(base), mc = Mean(cand);
  if (!(std::fabs(mc / mb - 1.0) > 0.01)) return Verdict::kNoChange;
  const auto [bmin, bmax] = std::minmax_element(base.begin(), base.end());
  const auto [cmin, cmax] = std::minmax_element(cand.begin(), cand.end());
  if (*cmax < mb && mc < *bmin) return Signed(true, dir);
  if (*cmin > mb && mc > *bmax) return Signed(false, dir);
  return Verdict::kNoChange;
}

Verdict MmtestsRule(const std::vector<double>& base, const std::vector<double>& cand,
                    Direction dir) {
  if (base.size() < 2 || cand.size() < 2) return Verdict::kNoChange;
  const bool harmonic = dir == Direction::kHigherIsBetter;
  for (const auto* x : {&base, &cand}) {
    for (double v : *x) {
      if (harmonic && !(v > 0.0)) return Verdict::kNoChange;
    }
  }
  const double lb = Location(base, harmonic), lc = Location(cand, harmonic);
  if (!(std::fabs(lc - lb) > HalfWidth(base, harmonic) + HalfWidth(cand, harmonic))) {
    return Verdict::kNoChange;
  }
  return Signed(lc < lb, dir);
}

}  // namespace blkbench::gate
