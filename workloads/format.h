// Human-readable views of expanded cells: one-line labels and the `blkbench
// validate` table.
#ifndef BLKBENCH_WORKLOADS_FORMAT_H_
#define BLKBENCH_WORKLOADS_FORMAT_H_

#include <string>

#include "blkbench/v1/workload.pb.h"
#include "common/cell_label.h"
#include "workloads/matrix.h"

namespace blkbench::workloads {

// CellLabel and FioRwName live in common/ (metrics and the results API need them
// without depending on the matrix parser); these keep the workloads:: spelling.
using ::blkbench::CellLabel;
using ::blkbench::FioRwName;

// A summary line, then a table with one row per cell: its index, one column per
// axis (values as written), then the key job fields not already shown as axes.
// Ends with a newline.
std::string FormatCells(const Matrix& m);

}  // namespace blkbench::workloads

#endif  // BLKBENCH_WORKLOADS_FORMAT_H_
