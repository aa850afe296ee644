// The single-value bounds of a cell, checked on the CellSpec itself (not on matrix text):
// what an agent re-checks on every assignment before it touches anything, so a
// controller that is compromised, buggy or fake cannot make it run what the matrix
// parser would have refused (iodepth 0, numjobs 20000, a bs that is not whole sectors).
#ifndef BLKBENCH_WORKLOADS_CELL_BOUNDS_H_
#define BLKBENCH_WORKLOADS_CELL_BOUNDS_H_

#include "absl/status/status.h"
#include "blkbench/v1/workload.pb.h"

namespace blkbench::workloads {

// OK, or InvalidArgument naming every field out of bounds and its bounds (the same
// upper bounds the matrix parser enforces, job_options.h; 0 is "unset" and allowed),
// and every cross-key problem CheckCell finds.
absl::Status CheckCellBounds(const v1::CellSpec& cell);

}  // namespace blkbench::workloads

#endif  // BLKBENCH_WORKLOADS_CELL_BOUNDS_H_
