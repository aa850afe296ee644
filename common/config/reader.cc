// The non-template half of the configuration reader: diagnostics, key paths and the walk
// over a map's keys; see reader.h.
#include "common/config/reader.h"

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "common/suggest.h"

namespace blkbench::config {
namespace {

// Scalars quoted in messages are cut here: a message names the value, it need not hold it.
constexpr size_t kMaxQuoted = 60;

// Debian's abseil has its own string_view (ABSL_OPTION_USE_STD_STRING_VIEW 0).
absl::string_view A(std::string_view s) { return {s.data(), s.size()}; }

bool Before(const yaml::Mark& a, const yaml::Mark& b) {
  return a.line != b.line ? a.line < b.line : a.column < b.column;
}

std::vector<std::string> InFileOrder(std::vector<std::pair<yaml::Mark, std::string>> lines) {
  std::stable_sort(lines.begin(), lines.end(),
                   [](const auto& a, const auto& b) { return Before(a.first, b.first); });
  std::vector<std::string> out;
  out.reserve(lines.size());
  for (auto& line : lines) out.push_back(std::move(line.second));
  return out;
}

}  // namespace

// ---- Diagnostics ----

std::string Diagnostics::Render(yaml::Mark at, std::string_view path,
                                std::string_view message) const {
  std::string out = file_;
  if (at.known()) absl::StrAppend(&out, ":", at.line, ":", at.column);
  absl::StrAppend(&out, ": ");
  if (!path.empty()) absl::StrAppend(&out, A(path), ": ");
  absl::StrAppend(&out, A(message));
  return out;
}

void Diagnostics::AddError(yaml::Mark at, std::string_view path, std::string_view message) {
  std::string text = Render(at, path, message);
  for (const Line& l : errors_) {
    if (l.text == text) return;
  }
  errors_.push_back({at, std::move(text)});
}

void Diagnostics::AddWarning(yaml::Mark at, std::string_view path, std::string_view message) {
  std::string text = Render(at, path, message);
  for (const Line& l : warnings_) {
    if (l.text == text) return;
  }
  warnings_.push_back({at, std::move(text)});
}

absl::Status Diagnostics::ToStatus() const {
  if (errors_.empty()) return absl::OkStatus();
  std::vector<std::pair<yaml::Mark, std::string>> lines;
  for (const Line& l : errors_) lines.emplace_back(l.at, l.text);
  std::vector<std::string> sorted = InFileOrder(std::move(lines));
  std::string out;
  for (size_t i = 0; i < sorted.size() && i < kMaxShown; ++i) {
    absl::StrAppend(&out, i == 0 ? "" : "\n", sorted[i]);
  }
  if (sorted.size() > kMaxShown) {
    absl::StrAppend(&out, "\n... and ", sorted.size() - kMaxShown, " more errors");
  }
  return absl::InvalidArgumentError(out);
}

std::vector<std::string> Diagnostics::Warnings() const {
  std::vector<std::pair<yaml::Mark, std::string>> lines;
  for (const Line& l : warnings_) lines.emplace_back(l.at, l.text);
  return InFileOrder(std::move(lines));
}

// ---- Context ----

yaml::Mark Context::PlaceOf(const yaml::Node& at) const {
  // A missing value's mark is not its own (the parser gives the previous event's).
  if (!at.IsNull() && at.mark().known()) return at.mark();
  return places_.empty() ? at.mark() : places_.back();
}

void Context::Error(const yaml::Node& at, std::string_view message) {
  diagnostics_.AddError(PlaceOf(at), path_, message);
}

void Context::Warning(const yaml::Node& at, std::string_view message) {
  diagnostics_.AddWarning(PlaceOf(at), path_, message);
}

void Context::Expected(const yaml::Node& value, std::string_view expected,
                       absl::string_view detail) {
  std::string message = absl::StrCat("expected ", A(expected), ", got ", Got(value));
  if (!detail.empty()) absl::StrAppend(&message, "; ", detail);
  Error(value, message);
}

Context::Scope Context::Key(std::string_view key, const yaml::Node& where) {
  const size_t size = path_.size();
  places_.push_back(PlaceOf(where));
  absl::StrAppend(&path_, path_.empty() ? "" : ".", A(key));
  return Scope(*this, size);
}

Context::Scope Context::Index(size_t index, const yaml::Node& where) {
  const size_t size = path_.size();
  places_.push_back(PlaceOf(where));
  absl::StrAppend(&path_, "[", index, "]");
  return Scope(*this, size);
}

Context::Scope::~Scope() {
  context_.path_.resize(path_size_);
  context_.places_.pop_back();
}

std::string Got(const yaml::Node& value) {
  if (!value.IsScalar()) return std::string(value.Kind());
  const std::string& text = value.Scalar();
  std::string shown = text.substr(0, kMaxQuoted);
  if (std::any_of(shown.begin(), shown.end(),
                  [](char c) { return static_cast<unsigned char>(c) < 0x20; })) {
    shown = absl::CHexEscape(shown);
  }
  return absl::StrCat("'", shown, text.size() > kMaxQuoted ? "..." : "", "'");
}

// ---- Maps ----

void ReadMap(const yaml::Node& map, const std::vector<FieldInfo>& fields, Context& context,
             absl::FunctionRef<void(size_t field, const yaml::Node& value)> read_field) {
  std::vector<yaml::Node> seen(fields.size());  // each field's key, once read
  for (const auto& [key, value] : map.entries()) {
    if (!key.IsScalar()) {
      context.Error(key, absl::StrCat("keys must be plain names, got ", A(key.Kind())));
      continue;
    }
    const std::string& name = key.Scalar();
    const auto field = std::find_if(fields.begin(), fields.end(),
                                    [&](const FieldInfo& f) { return f.name == name; });
    if (field == fields.end()) {
      std::vector<std::string_view> names;
      names.reserve(fields.size());
      for (const FieldInfo& f : fields) names.push_back(f.name);
      std::string valid;
      for (std::string_view n : names) absl::StrAppend(&valid, valid.empty() ? "" : ", ", A(n));
      context.Error(key, absl::StrCat("unknown key '", name, "'", DidYouMean(name, names),
                                      "; valid keys: ", valid));
      continue;
    }
    const size_t i = static_cast<size_t>(field - fields.begin());
    if (seen[i]) {
      context.Error(key, absl::StrCat("key '", name, "' appears twice (first at line ",
                                      seen[i].mark().line, ")"));
      continue;
    }
    seen[i] = key;
    Context::Scope scope = context.Key(name, key);
    read_field(i, value);
  }
  for (size_t i = 0; i < fields.size(); ++i) {
    if (fields[i].required && !seen[i]) {
      context.Error(map, absl::StrCat("key '", A(fields[i].name), "' is required (expected ",
                                      A(fields[i].expected), ")"));
    }
  }
}

}  // namespace blkbench::config
