// The upper bounds of a job's sizes and times (see job_bounds.h).
#include "common/job_bounds.h"

#include <iterator>
#include <string>

#include "absl/strings/str_cat.h"

namespace blkbench {
namespace {

// "64m", "1t", or bytes when no binary unit divides the value: the form a matrix uses.
std::string SizeText(uint64_t bytes) {
  static constexpr const char* kUnits[] = {"k", "m", "g", "t", "p"};
  if (bytes == 0 || bytes % 1024 != 0) return absl::StrCat(bytes);
  int unit = -1;
  while (bytes % 1024 == 0 && unit + 1 < static_cast<int>(std::size(kUnits))) {
    bytes /= 1024;
    ++unit;
  }
  return absl::StrCat(bytes, kUnits[unit]);
}

constexpr char kBsWhy[] =
    "larger blocks than the device's max I/O size are split by the block layer; blkbench "
    "caps bs at 64 MiB";

// Names are const char*: Debian's abseil StrCat takes absl::string_view, not std's.
void CheckBs(const char* what, const char* key, uint64_t bs, std::vector<JobProblem>& out) {
  if (bs <= kMaxBs) return;
  out.push_back(
      {{key}, absl::StrCat(what, " ", SizeText(bs), " is above ", SizeText(kMaxBs), ": ", kBsWhy)});
}

}  // namespace

void CheckJobBounds(const v1::JobSpec& spec, uint32_t numjobs, std::vector<JobProblem>& out) {
  CheckBs("bs", "bs", spec.bs(), out);
  CheckBs("bsrange maximum", "bs", spec.bs_max(), out);
  for (const v1::BsSplit& e : spec.bssplit()) CheckBs("bssplit block size", "bssplit", e.bs(), out);
  CheckBs("the writes' bs", "bs", spec.write_bs(), out);
  CheckBs("the writes' bsrange maximum", "bs", spec.write_bs_max(), out);
  for (const v1::BsSplit& e : spec.write_bssplit()) {
    CheckBs("the writes' bssplit block size", "bssplit", e.bs(), out);
  }

  const struct {
    const char* key;
    uint64_t value;
  } sizes[] = {{"size", spec.size()},
               {"offset", spec.offset()},
               {"offset_increment", spec.offset_increment()},
               {"io_size", spec.io_size()}};
  bool sizes_ok = true;
  for (const auto& s : sizes) {
    if (s.value <= kMaxJobBytes) continue;
    sizes_ok = false;
    out.push_back({{s.key},
                   absl::StrCat(s.key, " ", SizeText(s.value), " is above ", SizeText(kMaxJobBytes),
                                " (1 EiB): beyond any block device; blkbench caps size, offset, "
                                "offset_increment and io_size at 1 EiB")});
  }
  // Each below 2^60, so only the product can overflow 64 bits.
  uint64_t spread = 0, end = 0;
  if (sizes_ok && numjobs > 1 &&
      (__builtin_mul_overflow(spec.offset_increment(), uint64_t{numjobs - 1}, &spread) ||
       __builtin_add_overflow(spread, spec.offset() + spec.size(), &end) || end > kMaxFileOffset)) {
    out.push_back({{"offset_increment", "numjobs"},
                   absl::StrCat("the last job's region (offset + offset_increment × ", numjobs - 1,
                                " + size) ends beyond 8 EiB, the largest file offset (loff_t)")});
  }

  const struct {
    const char* key;
    uint64_t ns;
  } durations[] = {{"runtime", spec.runtime_ns()},
                   {"ramp_time", spec.ramp_time_ns()},
                   {"startdelay", spec.startdelay_ns()}};
  for (const auto& d : durations) {
    if (d.ns <= kMaxJobDurationNs) continue;
    out.push_back({{d.key},
                   absl::StrCat(d.key, " ", d.ns / 1'000'000'000,
                                "s is above 30 days (2592000s): a run holds its device and lease "
                                "that long; blkbench caps runtime, ramp_time and startdelay at 30 "
                                "days (a bare number is seconds)")});
  }
}

}  // namespace blkbench
