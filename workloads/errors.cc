// ErrorList: error collection and rendering for matrix files.
#include "workloads/errors.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace blkbench::workloads {

namespace {

void AddOnce(std::vector<std::pair<Position, std::string>>& list, Position pos,
             std::string message) {
  for (const auto& [p, m] : list) {
    if (p == pos && m == message) return;
  }
  list.emplace_back(pos, std::move(message));
}

std::vector<std::pair<Position, std::string>> Sorted(
    std::vector<std::pair<Position, std::string>> list) {
  std::stable_sort(list.begin(), list.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  return list;
}

}  // namespace

void ErrorList::Add(Position pos, std::string message) {
  AddOnce(errors_, pos, std::move(message));
}

void ErrorList::AddWarning(Position pos, std::string message) {
  AddOnce(warnings_, pos, std::move(message));
}

std::vector<std::string> ErrorList::Warnings() const {
  std::vector<std::string> lines;
  for (const auto& [pos, message] : Sorted(warnings_)) {
    lines.push_back(
        absl::StrCat(file_name_, ":", pos.line, ":", pos.column, ": warning: ", message));
  }
  return lines;
}

absl::Status ErrorList::ToStatus() const {
  if (errors_.empty()) return absl::OkStatus();
  const std::vector<std::pair<Position, std::string>> sorted = Sorted(errors_);
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
