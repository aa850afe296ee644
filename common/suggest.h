// "Did you mean ...?" for unknown keys and words: the closest candidate by edit distance.
// Shared by every reader of user text (matrices, the agent's config; common/config).
#ifndef BLKBENCH_COMMON_SUGGEST_H_
#define BLKBENCH_COMMON_SUGGEST_H_

#include <cstddef>
#include <span>
#include <string>
#include <string_view>

namespace blkbench {

// Optimal-string-alignment distance (Levenshtein plus adjacent transpositions).
size_t EditDistance(std::string_view a, std::string_view b);

// Returns the candidate closest to `word`, or "" when none is close enough to be a
// plausible typo (distance at most max(1, len/3)). Ties go to the earlier candidate.
std::string_view ClosestMatch(std::string_view word, std::span<const std::string_view> candidates);

// " (did you mean 'X'?)" with ClosestMatch's X, or "" when nothing is close.
std::string DidYouMean(std::string_view word, std::span<const std::string_view> candidates);

}  // namespace blkbench

#endif  // BLKBENCH_COMMON_SUGGEST_H_
