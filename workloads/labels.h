// Names, device classes and labels people and agents choose: shown in tables, logs,
// dashboards and file names, so they must not hide or reorder text. A label is 1 to 128
// bytes of UTF-8 without control characters (C0, DEL, C1) or bidirectional overrides and
// isolates (U+202A..U+202E, U+2066..U+2069), which can make "evil" display as "live".
#ifndef BLKBENCH_WORKLOADS_LABELS_H_
#define BLKBENCH_WORKLOADS_LABELS_H_

#include <string>
#include <string_view>

namespace blkbench::workloads {

inline constexpr size_t kMaxLabelBytes = 128;

// "" when `value` is a valid label; else what is wrong with it, completing
// "expected ..., got ...: <reason>" (e.g. "a bidirectional override at byte 3").
std::string LabelProblem(std::string_view value);

}  // namespace blkbench::workloads

#endif  // BLKBENCH_WORKLOADS_LABELS_H_
