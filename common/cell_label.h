// Names of a cell that every layer shows the same way: its one-line label (metrics
// labels, the results API, the CLI's tables) and fio's spelling of its rw mode.
#ifndef BLKBENCH_COMMON_CELL_LABEL_H_
#define BLKBENCH_COMMON_CELL_LABEL_H_

#include <string>

#include "blkbench/v1/workload.pb.h"

namespace blkbench {

// "scheduler=bfq bs=4k iodepth=32" from the cell's axes, in order; "(single cell)"
// when the matrix has no axes.
std::string CellLabel(const v1::CellSpec& cell);

// fio's rw= spelling of `rw`: "read", "write", "randread", "randwrite", "randrw", "rw";
// "" for an unset mode.
std::string FioRwName(v1::RwMode rw);

}  // namespace blkbench

#endif  // BLKBENCH_COMMON_CELL_LABEL_H_
