// fio cpus_allowed list parsing ("0-3,6"), see cpu_list.h.
#include "agent/executor/cpu_list.h"

#include <algorithm>
#include <charconv>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace blkbench {
namespace {

// (Debian's abseil has its own string_view type, so plain std helpers here.)
std::string_view Strip(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::string Str(std::string_view s) { return std::string(s); }

absl::StatusOr<uint32_t> ParseCpu(std::string_view s, std::string_view whole, uint32_t max_cpus) {
  s = Strip(s);
  uint32_t v = 0;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || ptr != s.data() + s.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("cpus_allowed \"", Str(whole), "\": \"", Str(s), "\" is not a CPU number"));
  }
  if (v >= max_cpus) {
    return absl::InvalidArgumentError(absl::StrCat("cpus_allowed \"", Str(whole), "\": CPU ", v,
                                                   " too large (this host has ", max_cpus, ")"));
  }
  return v;
}

}  // namespace

absl::StatusOr<std::vector<uint32_t>> ParseCpuList(std::string_view list, uint32_t max_cpus) {
  std::vector<uint32_t> cpus;
  if (Strip(list).empty()) return cpus;
  for (size_t pos = 0; pos <= list.size();) {
    const size_t comma = std::min(list.find(',', pos), list.size());
    const std::string_view item = list.substr(pos, comma - pos);
    pos = comma + 1;
    const size_t dash = item.find('-');
    absl::StatusOr<uint32_t> lo = ParseCpu(item.substr(0, dash), list, max_cpus);
    if (!lo.ok()) return lo.status();
    uint32_t hi = *lo;
    if (dash != std::string_view::npos) {
      absl::StatusOr<uint32_t> h = ParseCpu(item.substr(dash + 1), list, max_cpus);
      if (!h.ok()) return h.status();
      if (*h < *lo) {
        return absl::InvalidArgumentError(absl::StrCat("cpus_allowed \"", Str(list), "\": range \"",
                                                       Str(item), "\" is reversed"));
      }
      hi = *h;
    }
    for (uint32_t c = *lo; c <= hi; ++c) cpus.push_back(c);
  }
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  return cpus;
}

}  // namespace blkbench
