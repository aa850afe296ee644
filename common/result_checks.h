// Whether a measured result may be stored as a done run. One rule for every path that
// records a result (the controller for agents' runs, the CLI's local and sim runs), so a
// run that measured nothing never shows up as a 0-IOPS data point.
#ifndef BLKBENCH_COMMON_RESULT_CHECKS_H_
#define BLKBENCH_COMMON_RESULT_CHECKS_H_

#include "absl/status/status.h"
#include "blkbench/v1/metrics.pb.h"

namespace blkbench {

// OK, or FailedPrecondition whose message starts "no I/O completed" when the run measured
// time (duration_ns > 0) but completed no reads or writes, counted over all its jobs
// (RunResult.io is the run's total). A result without measured time (duration_ns 0) is
// not judged here: no time, no rate.
absl::Status CheckResultHasIo(const v1::RunResult& result);

}  // namespace blkbench

#endif  // BLKBENCH_COMMON_RESULT_CHECKS_H_
