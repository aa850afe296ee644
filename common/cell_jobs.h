// The jobs of a cell: its one `job`, or its named jobs (CellSpec.jobs, fio's sections run
// concurrently), flattened the one way every layer counts them — the threads of jobs[0]
// first, then those of jobs[1], ... — and the cgroup layout group each thread runs in.
#ifndef BLKBENCH_COMMON_CELL_JOBS_H_
#define BLKBENCH_COMMON_CELL_JOBS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "blkbench/v1/workload.pb.h"

namespace blkbench {

// One job of a cell as the runners see it: a name ("" for a one-job cell), its options
// and the first of its numjobs threads in the cell's thread order.
struct CellJob {
  std::string name;
  const v1::JobSpec* spec = nullptr;  // points into the cell; never null
  std::string group;                  // NamedJob.group; "" = by the layout's order
  uint32_t first_thread = 0;
};

// The cell's jobs: one per named job in order, or the cell's `job` alone. The specs
// point into `cell`, which must outlive the result.
std::vector<CellJob> CellJobs(const v1::CellSpec& cell);

// numjobs summed over the cell's jobs (a numjobs of 0 counts as fio's default 1).
uint64_t TotalNumjobs(const v1::CellSpec& cell);

// The index into cell.cgroup_layout().groups() of each thread's group, in thread order;
// empty for a root layout (no groups). A named job with a group runs all its threads in
// that group; threads of jobs without one fill the layout's groups in order, each group
// taking its `jobs` threads (the layout's own rule). A group name the layout lacks, or
// more threads than groups' slots, gives the last group (the parser refuses both).
std::vector<uint32_t> ThreadGroups(const v1::CellSpec& cell);

}  // namespace blkbench

#endif  // BLKBENCH_COMMON_CELL_JOBS_H_
