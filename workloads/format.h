// Human-readable views of expanded cells: one-line labels and the `blkbench
// validate` table.
#ifndef BLKBENCH_WORKLOADS_FORMAT_H_
#define BLKBENCH_WORKLOADS_FORMAT_H_

#include <string>

#include "blkbench/v1/workload.pb.h"
#include "workloads/matrix.h"

namespace blkbench::workloads {

// "scheduler=bfq bs=4k iodepth=32" from the cell's axes, in order; "(single cell)"
// when the matrix has no axes.
std::string CellLabel(const v1::CellSpec& cell);

// fio's rw= spelling of `rw`: "read", "write", "randread", "randwrite", "randrw", "rw".
std::string FioRwName(v1::RwMode rw);

// A summary line, then a table with one row per cell: its index, one column per
// axis (values as written), then the key job fields not already shown as axes.
// Ends with a newline.
std::string FormatCells(const Matrix& m);

}  // namespace blkbench::workloads

#endif  // BLKBENCH_WORKLOADS_FORMAT_H_
