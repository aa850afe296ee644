// YAML scalars that read back as written (yaml_scalar.h). The word lists are YAML 1.1's
// bool, null, float and merge types (yaml.org/type) with 1.2's core schema inside them.
#include "workloads/yaml_scalar.h"

#include <algorithm>
#include <cctype>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace blkbench::workloads {
namespace {

// Compared case-insensitively: YAML 1.1 takes "Yes", "YES" and "yes" alike (and a
// mixed "yEs" quoted costs nothing).
constexpr std::string_view kReservedWords[] = {
    "null", "~", "true", "false", "yes",   "no",   "on", "off",
    "y",    "n", ".inf", "+.inf", "-.inf", ".nan", "<<", "=",
};

bool Reserved(std::string_view v) {
  const std::string lower = absl::AsciiStrToLower(std::string(v));
  return std::find(std::begin(kReservedWords), std::end(kReservedWords), lower) !=
         std::end(kReservedWords);
}

// Whether a YAML 1.1 reader may take `v` for an int, a float, a sexagesimal or a
// timestamp: a digit (after an optional sign or a leading '.') and then only characters
// those forms use. Errs towards quoting: "1-2" is quoted though no schema reads it.
bool NumberLike(std::string_view v) {
  if (!v.empty() && (v.front() == '+' || v.front() == '-')) v.remove_prefix(1);
  if (!v.empty() && v.front() == '.') v.remove_prefix(1);
  if (v.empty() || !absl::ascii_isdigit(static_cast<unsigned char>(v.front()))) return false;
  return std::all_of(v.begin(), v.end(), [](char c) {
    return absl::ascii_isxdigit(static_cast<unsigned char>(c)) ||
           std::string_view("xXoObB_.+-:eE").find(c) != std::string_view::npos;
  });
}

bool NeedsQuotes(std::string_view v, ScalarKind kind) {
  if (v.empty() || Reserved(v)) return true;
  // An option's value keeps a plain decimal plain (iodepth: 32); "1:30" is still quoted,
  // which a YAML 1.1 reader takes for the sexagesimal 90.
  const bool decimal = std::all_of(v.begin(), v.end(), [](char c) {
    return absl::ascii_isdigit(static_cast<unsigned char>(c));
  });
  if (NumberLike(v) && (kind == ScalarKind::kString || !decimal)) return true;
  if (std::string_view("-?:,[]{}#&*!|>'\"%@` ").find(v.front()) != std::string_view::npos) {
    return true;
  }
  if (v.back() == ' ' || v.back() == ':') return true;
  if (v.find(": ") != std::string_view::npos || v.find(" #") != std::string_view::npos) {
    return true;
  }
  return std::any_of(v.begin(), v.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return u < 0x20 || u == 0x7f;
  });
}

}  // namespace

std::string YamlScalar(std::string_view v, ScalarKind kind) {
  if (!NeedsQuotes(v, kind)) return std::string(v);
  std::string out = "\"";
  for (char c : v) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out.push_back('\\');
      out.push_back(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (u < 0x20 || u == 0x7f) {
      absl::StrAppend(&out, "\\x", absl::Hex(u, absl::kZeroPad2));
    } else {
      out.push_back(c);
    }
  }
  return out + "\"";
}

}  // namespace blkbench::workloads
