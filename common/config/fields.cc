// The scalar readers and list helpers behind the field kinds; see fields.h.
#include "common/config/fields.h"

#include <algorithm>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/suggest.h"
#include "common/units.h"

namespace blkbench::config {

void ReportRepeated(const yaml::Node& list, const std::vector<std::string>& values,
                    std::string_view key, Context& context) {
  std::map<std::string_view, size_t> first;
  for (size_t i = 0; i < values.size() && i < list.size(); ++i) {
    if (values[i].empty()) continue;
    const auto [it, inserted] = first.emplace(values[i], i);
    if (inserted) continue;
    const yaml::Node value = list[i][key];
    Context::Scope item = context.Index(i, list[i]);
    Context::Scope field = context.Key(key, value);
    context.Error(value, absl::StrCat("'", values[i], "' is listed twice (first at line ",
                                      list[it->second][key].mark().line, ")"));
  }
}

// ---- Scalars ----

std::optional<std::string> ReadString(const yaml::Node& value, std::string_view expected,
                                      Empty empty, Context& context) {
  if (!value.IsScalar() || (empty == Empty::kRefused && value.Scalar().empty())) {
    context.Expected(value, expected);
    return std::nullopt;
  }
  return value.Scalar();
}

std::optional<std::string> ReadPath(const yaml::Node& value, std::string_view expected,
                                    Context& context) {
  std::optional<std::string> path = ReadString(value, expected, Empty::kRefused, context);
  if (path && path->front() != '/') {
    context.Expected(value, expected);
    return std::nullopt;
  }
  return path;
}

std::optional<bool> ReadBool(const yaml::Node& value, std::string_view expected, Context& context) {
  const std::string word = value.IsScalar() ? value.Scalar() : "";
  if (word == "true" || word == "1") return true;
  if (word == "false" || word == "0") return false;
  context.Expected(value, expected);
  return std::nullopt;
}

std::optional<int64_t> ReadInt(const yaml::Node& value, std::string_view expected, int64_t min,
                               int64_t max, Context& context) {
  int64_t n = 0;
  if (!value.IsScalar() || !absl::SimpleAtoi(value.Scalar(), &n) || n < min || n > max) {
    context.Expected(value, expected);
    return std::nullopt;
  }
  return n;
}

std::optional<uint64_t> ReadUint(const yaml::Node& value, std::string_view expected, uint64_t min,
                                 uint64_t max, Context& context) {
  uint64_t n = 0;
  if (!value.IsScalar() || !absl::SimpleAtoi(value.Scalar(), &n) || n < min || n > max) {
    context.Expected(value, expected);
    return std::nullopt;
  }
  return n;
}

std::optional<uint64_t> ReadBytes(const yaml::Node& value, std::string_view expected, uint64_t min,
                                  uint64_t max, Context& context) {
  if (!value.IsScalar()) {
    context.Expected(value, expected);
    return std::nullopt;
  }
  absl::StatusOr<uint64_t> n = ParseSize(value.Scalar());
  if (!n.ok()) {
    context.Expected(value, expected, n.status().message());
    return std::nullopt;
  }
  if (*n < min || *n > max) {
    context.Expected(value, expected);
    return std::nullopt;
  }
  return *n;
}

std::optional<std::string> ReadWord(const yaml::Node& value, const std::vector<std::string>& words,
                                    Context& context) {
  const std::string text = value.IsScalar() ? value.Scalar() : "";
  if (std::find(words.begin(), words.end(), text) != words.end() && !text.empty()) return text;
  std::vector<std::string_view> candidates(words.begin(), words.end());
  context.Error(value, absl::StrCat("expected ", WordList(words), ", got ", Got(value),
                                    value.IsScalar() ? DidYouMean(text, candidates) : ""));
  return std::nullopt;
}

std::string WordList(const std::vector<std::string>& words) {
  std::string out;
  for (size_t i = 0; i < words.size(); ++i) {
    absl::StrAppend(&out, i == 0 ? "" : (i + 1 == words.size() ? " or " : ", "), words[i]);
  }
  return out;
}

}  // namespace blkbench::config
