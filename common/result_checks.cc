// The no-I/O rule for results (see result_checks.h).
#include "common/result_checks.h"

#include "absl/strings/str_cat.h"

namespace blkbench {

absl::Status CheckResultHasIo(const v1::RunResult& result) {
  if (result.duration_ns() == 0) return absl::OkStatus();
  if (result.io().read_ios() + result.io().write_ios() > 0) return absl::OkStatus();
  return absl::FailedPreconditionError(
      absl::StrCat("no I/O completed in ", static_cast<double>(result.duration_ns()) / 1e9,
                   " s of measured run time: a region beyond the device's end, a device that never "
                   "answered, or a job that "
                   "never started; failed rather than stored as 0 IOPS"));
}

}  // namespace blkbench
