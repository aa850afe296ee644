// Suffix parsing for sizes and durations with fio's meanings, plus display formatting.
#include "common/units.h"

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"

namespace blkbench {
namespace {

// Debian's abseil has its own string_view (ABSL_OPTION_USE_STD_STRING_VIEW 0).
absl::string_view ToAbsl(std::string_view s) { return {s.data(), s.size()}; }

constexpr uint64_t kKi = 1024;
constexpr uint64_t kNsPerUs = 1000;
constexpr uint64_t kNsPerMs = 1000 * kNsPerUs;
constexpr uint64_t kNsPerSec = 1000 * kNsPerMs;

struct Unit {
  absl::string_view suffix;
  uint64_t multiplier;
};

constexpr std::array<Unit, 17> kSizeUnits = {{
    {"", 1},
    {"b", 1},
    {"k", kKi},
    {"kb", kKi},
    {"kib", kKi},
    {"m", kKi* kKi},
    {"mb", kKi* kKi},
    {"mib", kKi* kKi},
    {"g", kKi* kKi* kKi},
    {"gb", kKi* kKi* kKi},
    {"gib", kKi* kKi* kKi},
    {"t", kKi* kKi* kKi* kKi},
    {"tb", kKi* kKi* kKi* kKi},
    {"tib", kKi* kKi* kKi* kKi},
    {"p", kKi* kKi* kKi* kKi* kKi},
    {"pb", kKi* kKi* kKi* kKi* kKi},
    {"pib", kKi* kKi* kKi* kKi* kKi},
}};

// fio's get_mult_time treats a bare number as seconds for runtime/ramp_time.
constexpr std::array<Unit, 12> kTimeUnits = {{
    {"", kNsPerSec},
    {"us", kNsPerUs},
    {"usec", kNsPerUs},
    {"ms", kNsPerMs},
    {"msec", kNsPerMs},
    {"s", kNsPerSec},
    {"sec", kNsPerSec},
    {"m", 60 * kNsPerSec},
    {"min", 60 * kNsPerSec},
    {"h", 3600 * kNsPerSec},
    {"d", 86400 * kNsPerSec},
    {"ns", 1},
}};

// Splits "123abc" into its leading decimal digits and the lower-cased rest.
bool SplitNumber(absl::string_view s, absl::string_view* digits, std::string* suffix) {
  size_t i = 0;
  while (i < s.size() && absl::ascii_isdigit(static_cast<unsigned char>(s[i]))) ++i;
  if (i == 0) return false;
  *digits = s.substr(0, i);
  *suffix = absl::AsciiStrToLower(s.substr(i));
  return true;
}

template <size_t N>
absl::StatusOr<uint64_t> ParseWithUnits(absl::string_view s, const std::array<Unit, N>& units,
                                        absl::string_view what) {
  absl::string_view digits;
  std::string suffix;
  if (!SplitNumber(s, &digits, &suffix)) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", s, "' is not a ", what, ": it must start with a decimal number"));
  }
  uint64_t value = 0;
  if (!absl::SimpleAtoi(digits, &value)) {
    return absl::InvalidArgumentError(absl::StrCat("'", s, "' is too large"));
  }
  for (const Unit& unit : units) {
    if (unit.suffix != suffix) continue;
    uint64_t result = 0;
    if (__builtin_mul_overflow(value, unit.multiplier, &result)) {
      return absl::InvalidArgumentError(absl::StrCat("'", s, "' is too large"));
    }
    return result;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("'", s, "' has an unknown ", what, " suffix '", suffix, "'"));
}

// Display units, small to large, for FormatSize and FormatDurationNs.
constexpr std::array<Unit, 5> kSizeDisplay = {{{"k", kKi},
                                               {"m", kKi* kKi},
                                               {"g", kKi* kKi* kKi},
                                               {"t", kKi* kKi* kKi* kKi},
                                               {"p", kKi* kKi* kKi* kKi* kKi}}};
constexpr std::array<Unit, 6> kTimeDisplay = {{{"us", kNsPerUs},
                                               {"ms", kNsPerMs},
                                               {"s", kNsPerSec},
                                               {"m", 60 * kNsPerSec},
                                               {"h", 3600 * kNsPerSec},
                                               {"d", 86400 * kNsPerSec}}};

// Largest unit in `units` (ordered small to large) that divides `value` exactly, or
// the plain value followed by `base_suffix`.
template <size_t N>
std::string FormatWithUnits(uint64_t value, const std::array<Unit, N>& units,
                            absl::string_view base_suffix) {
  if (value == 0) return "0";
  for (size_t i = N; i-- > 0;) {
    if (value % units[i].multiplier == 0) {
      return absl::StrCat(value / units[i].multiplier, units[i].suffix);
    }
  }
  return absl::StrCat(value, base_suffix);
}

// A plain decimal number (no sign, no hex), as used in CPU lists.
bool ParseDecimal(absl::string_view s, uint64_t* value) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(c))) return false;
  }
  return absl::SimpleAtoi(s, value);
}

}  // namespace

absl::StatusOr<uint64_t> ParseSize(std::string_view s) {
  return ParseWithUnits(ToAbsl(s), kSizeUnits, "size");
}

absl::StatusOr<uint64_t> ParseDurationNs(std::string_view s) {
  return ParseWithUnits(ToAbsl(s), kTimeUnits, "duration");
}

absl::StatusOr<uint64_t> ParseUint(std::string_view in) {
  const absl::string_view s = ToAbsl(in);
  uint64_t value = 0;
  const bool hex = s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
  const absl::string_view digits = hex ? s.substr(2) : s;
  bool all_digits = !digits.empty();
  for (char c : digits) {
    const auto uc = static_cast<unsigned char>(c);
    if (!(hex ? absl::ascii_isxdigit(uc) : absl::ascii_isdigit(uc))) all_digits = false;
  }
  // SimpleHexAtoi/SimpleAtoi accept signs and whitespace; we do not.
  if (!all_digits) {
    return absl::InvalidArgumentError(absl::StrCat("'", s, "' is not an unsigned integer"));
  }
  const bool ok = hex ? absl::SimpleHexAtoi(digits, &value) : absl::SimpleAtoi(digits, &value);
  if (!ok) return absl::InvalidArgumentError(absl::StrCat("'", s, "' is too large"));
  return value;
}

absl::StatusOr<bool> ParseBool(std::string_view in) {
  const absl::string_view s = ToAbsl(in);
  const std::string lower = absl::AsciiStrToLower(s);
  if (lower == "1" || lower == "true") return true;
  if (lower == "0" || lower == "false") return false;
  return absl::InvalidArgumentError(absl::StrCat("'", s, "' is not 0, 1, true or false"));
}

absl::Status CheckCpuList(std::string_view in) {
  const absl::string_view s = ToAbsl(in);
  if (s.empty()) return absl::InvalidArgumentError("empty CPU list");
  for (absl::string_view item : absl::StrSplit(s, ',')) {
    const size_t dash = item.find('-');
    uint64_t first = 0;
    uint64_t last = 0;
    const bool ok = dash == absl::string_view::npos
                        ? ParseDecimal(item, &first) && ParseDecimal(item, &last)
                        : ParseDecimal(item.substr(0, dash), &first) &&
                              ParseDecimal(item.substr(dash + 1), &last);
    if (!ok) {
      return absl::InvalidArgumentError(
          absl::StrCat("'", item, "' is not a CPU number or a range like 0-3"));
    }
    if (first > last) {
      return absl::InvalidArgumentError(absl::StrCat("range '", item, "' runs backwards"));
    }
    if (last >= kMaxCpus) {
      return absl::InvalidArgumentError(
          absl::StrCat("CPU ", last, " is out of range (at most ", kMaxCpus - 1, ")"));
    }
  }
  return absl::OkStatus();
}

std::string FormatSize(uint64_t bytes) { return FormatWithUnits(bytes, kSizeDisplay, ""); }

std::string FormatDurationNs(uint64_t ns) { return FormatWithUnits(ns, kTimeDisplay, "ns"); }

}  // namespace blkbench
