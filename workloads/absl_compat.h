// Bridges std::string_view to absl::string_view: Debian's abseil is built with
// ABSL_OPTION_USE_STD_STRING_VIEW 0, so absl::StrCat and friends reject std views.
#ifndef BLKBENCH_WORKLOADS_ABSL_COMPAT_H_
#define BLKBENCH_WORKLOADS_ABSL_COMPAT_H_

#include <string_view>

#include "absl/strings/string_view.h"

namespace blkbench::workloads {

inline absl::string_view ToAbsl(std::string_view s) { return {s.data(), s.size()}; }

}  // namespace blkbench::workloads

#endif  // BLKBENCH_WORKLOADS_ABSL_COMPAT_H_
