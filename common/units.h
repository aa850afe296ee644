// Parsing of fio-style sizes, durations, integers, booleans and CPU lists, and the
// inverse formatting used when printing cells. Pure functions; thread-safe.
#ifndef BLKBENCH_COMMON_UNITS_H_
#define BLKBENCH_COMMON_UNITS_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace blkbench {

// Parses a byte count the way fio does with its default kb_base=1024 (fio parse.c
// __get_mult_bytes): a decimal integer followed by an optional case-insensitive
// suffix: none or "b" = bytes; k/kb, m/mb, g/gb, t/tb, p/pb = powers of 1024.
// "kib"/"mib"/... are also powers of 1024. Note: fio's compatibility mode reads
// "4KiB" as 4000 bytes ("opposite units"); we read it as 4096 because that is what
// everyone who writes KiB means, and a 4000-byte block size is never intended.
// On success returns the byte count; on a malformed number, unknown suffix or
// overflow returns InvalidArgument.
absl::StatusOr<uint64_t> ParseSize(std::string_view s);

// Parses a duration the way fio's runtime=/ramp_time= do (fio parse.c get_mult_time):
// a decimal integer followed by an optional case-insensitive unit. A bare number is
// seconds. Units: us/usec, ms/msec, s/sec, m/min, h, d (and ns, which fio lacks).
// Returns nanoseconds, or InvalidArgument on a malformed number, unknown unit or
// overflow. (fio itself matches "sec" and "min" by accident as microseconds; we
// give them their obvious meaning.)
absl::StatusOr<uint64_t> ParseDurationNs(std::string_view s);

// Parses an unsigned integer, decimal or 0x-prefixed hexadecimal (fio accepts both).
absl::StatusOr<uint64_t> ParseUint(std::string_view s);

// Parses fio booleans: 0, 1, true, false (case-insensitive).
absl::StatusOr<bool> ParseBool(std::string_view s);

// Checks a fio cpus_allowed list: comma-separated CPU numbers or ranges "a-b" with
// a <= b, e.g. "0-3,6". CPU numbers must be below kMaxCpus.
inline constexpr uint64_t kMaxCpus = 4096;
absl::Status CheckCpuList(std::string_view s);

// Inverse of ParseSize for display: the largest unit that divides exactly
// (4096 -> "4k", 1048576 -> "1m", 1000 -> "1000").
std::string FormatSize(uint64_t bytes);

// Inverse of ParseDurationNs for display: the largest unit that divides exactly
// (2000000000 -> "2s", 1500000 -> "1500us", 1 -> "1ns").
std::string FormatDurationNs(uint64_t ns);

}  // namespace blkbench

#endif  // BLKBENCH_COMMON_UNITS_H_
