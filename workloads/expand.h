// Internal to workloads/: the cartesian product of a matrix's axes, and the
// cross-key checks on every resulting cell.
#ifndef BLKBENCH_WORKLOADS_EXPAND_H_
#define BLKBENCH_WORKLOADS_EXPAND_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "blkbench/v1/workload.pb.h"
#include "workloads/bindings.h"
#include "workloads/errors.h"
#include "workloads/named_jobs.h"

namespace blkbench::workloads {

// A matrix may expand to at most this many cells (before repeats).
inline constexpr size_t kMaxCells = 10000;

struct Expansion {
  std::vector<std::string> axes;  // the axis keys as written, in file order
  std::vector<v1::CellSpec> cells;
};

// Expands `bindings` (in file order, no two with the same canonical key) into cells:
// the first axis varies slowest; every cell starts from `base` (the defaults with the
// scalar keys applied, from CheckValues); derived defaults fill the rest. Invalid bindings are
// skipped, and a cross-key problem involving one of them, or any key in `broken_keys`, is not
// reported (the user must fix the value first). Every other problem is reported once, at the first
// involved key the file sets. Reports more than kMaxCells cells as an error at `matrix_pos` and
// returns no cells.
// Named jobs (`jobs`, may be empty) are applied to every cell after its axes
// (ApplyNamedJobs), their problems reported at the job's own keys first.
Expansion ExpandCells(const std::vector<Binding>& bindings, const std::vector<NamedJobDef>& jobs,
                      const v1::CellSpec& base, const std::vector<std::string_view>& broken_keys,
                      Position matrix_pos, ErrorList& errors);

}  // namespace blkbench::workloads

#endif  // BLKBENCH_WORKLOADS_EXPAND_H_
