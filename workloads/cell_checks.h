// Checks that involve more than one key of an expanded cell (iodepth_batch_submit vs
// iodepth, time_based vs runtime, sim kernels vs device class, ...).
#ifndef BLKBENCH_WORKLOADS_CELL_CHECKS_H_
#define BLKBENCH_WORKLOADS_CELL_CHECKS_H_

#include <string>
#include <string_view>
#include <vector>

#include "blkbench/v1/workload.pb.h"

namespace blkbench::workloads {

struct CellIssue {
  // Canonical keys (OptionDef::canonical) the problem involves, the one to point
  // the user at first: the error is reported at the first of these the file sets.
  std::vector<std::string_view> keys;
  std::string message;
  // The named job (CellSpec.jobs) the problem is in; "" for the cell or its one job.
  std::string job;
};

// Returns every cross-key problem of `cell`, which must hold only valid single
// values and have had ResolveDerivedDefaults applied. Empty when the cell is fine. A cell
// with named jobs has each job checked on its own (messages start "job 'NAME': ").
std::vector<CellIssue> CheckCell(const v1::CellSpec& cell);

}  // namespace blkbench::workloads

#endif  // BLKBENCH_WORKLOADS_CELL_CHECKS_H_
