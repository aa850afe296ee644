// The table `blkbench run` prints after its results (format table): each run's device
// as the block layer saw it (/proc/diskstats over the run, iostat -x's columns) and, for
// `trace: 1` cells, the tracepoint summary; for runs in guests, the kernel and whether
// the timings are hardware's (kvm) or emulated (tcg).
#ifndef BLKBENCH_CLI_RUN_DEVICE_TABLE_H_
#define BLKBENCH_CLI_RUN_DEVICE_TABLE_H_

#include <ostream>

#include "blkbench/v1/controller.pb.h"

namespace blkbench {

// Prints the table of every RUN_DONE row of `results` on `out` ("-" where a regular file
// has no device counters or a trace key is missing).
void PrintDeviceTable(const v1::GetResultsResponse& results, std::ostream& out);

}  // namespace blkbench

#endif  // BLKBENCH_CLI_RUN_DEVICE_TABLE_H_
