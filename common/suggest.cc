// Edit distance and closest-key suggestion for error messages.
#include "common/suggest.h"

#include <algorithm>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace blkbench {

size_t EditDistance(std::string_view a, std::string_view b) {
  // d[i][j] = distance between a[0..i) and b[0..j); three rows suffice for OSA.
  const size_t n = b.size();
  std::vector<size_t> prev2(n + 1), prev(n + 1), cur(n + 1);
  for (size_t j = 0; j <= n; ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= n; ++j) {
      const size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        cur[j] = std::min(cur[j], prev2[j - 2] + 1);
      }
    }
    prev2.swap(prev);
    prev.swap(cur);
  }
  return prev[n];
}

std::string_view ClosestMatch(std::string_view word, std::span<const std::string_view> candidates) {
  const size_t limit = std::max<size_t>(1, word.size() / 3);
  std::string_view best;
  size_t best_distance = limit + 1;
  for (std::string_view candidate : candidates) {
    const size_t d = EditDistance(word, candidate);
    if (d < best_distance) {
      best = candidate;
      best_distance = d;
    }
  }
  return best;
}

std::string DidYouMean(std::string_view word, std::span<const std::string_view> candidates) {
  const std::string_view best = ClosestMatch(word, candidates);
  if (best.empty()) return "";
  return std::string(" (did you mean '").append(best).append("'?)");
}

}  // namespace blkbench
