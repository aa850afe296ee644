// "Did you mean ...?" for unknown keys: the closest candidate by edit distance.
#ifndef BLKBENCH_WORKLOADS_SUGGEST_H_
#define BLKBENCH_WORKLOADS_SUGGEST_H_

#include <cstddef>
#include <span>
#include <string_view>

namespace blkbench::workloads {

// Optimal-string-alignment distance (Levenshtein plus adjacent transpositions).
size_t EditDistance(std::string_view a, std::string_view b);

// Returns the candidate closest to `word`, or "" when none is close enough to be a
// plausible typo (distance at most max(1, len/3)). Ties go to the earlier candidate.
std::string_view ClosestMatch(std::string_view word, std::span<const std::string_view> candidates);

}  // namespace blkbench::workloads

#endif  // BLKBENCH_WORKLOADS_SUGGEST_H_
