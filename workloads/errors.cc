// ErrorList: error collection and rendering for matrix files.
#include "workloads/errors.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace blkbench::workloads {

void ErrorList::Add(Position pos, std::string message) {
  for (const auto& [p, m] : errors_) {
    if (p == pos && m == message) return;
  }
  errors_.emplace_back(pos, std::move(message));
}

absl::Status ErrorList::ToStatus() const {
  if (errors_.empty()) return absl::OkStatus();
  std::vector<std::pair<Position, std::string>> sorted = errors_;
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::string text;
  for (size_t i = 0; i < sorted.size() && i < kMaxShown; ++i) {
    if (i > 0) text += "\n";
    absl::StrAppend(&text, file_name_, ":", sorted[i].first.line, ":", sorted[i].first.column, ": ",
                    sorted[i].second);
  }
  if (sorted.size() > kMaxShown) {
    absl::StrAppend(&text, "\n", file_name_, ": ... and ", sorted.size() - kMaxShown,
                    " more errors");
  }
  return absl::InvalidArgumentError(text);
}

}  // namespace blkbench::workloads
