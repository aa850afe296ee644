// Reading a small file that a person or a program chose, safely: a regular file only
// (never a device, FIFO, socket or /proc file that never ends), of bounded size.
#ifndef BLKBENCH_COMMON_BOUNDED_FILE_H_
#define BLKBENCH_COMMON_BOUNDED_FILE_H_

#include <cstddef>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace blkbench {

// The contents of `path`, which must be a regular file of at most `max_bytes`. Errors
// name `what` and the path: NotFound, PermissionDenied (errno-derived) or InvalidArgument
// (not a regular file, too large). Opening never blocks (a FIFO is refused, not waited on).
absl::StatusOr<std::string> ReadBoundedRegularFile(const std::string& path, size_t max_bytes,
                                                   std::string_view what);

}  // namespace blkbench

#endif  // BLKBENCH_COMMON_BOUNDED_FILE_H_
