// Internal to workloads/: the matrix's `jobs:` section — named jobs that run concurrently
// in one run, like fio's sections — as read from the file, applied to each expanded cell
// (CellSpec.jobs) and checked there.
//
// Precedence, lowest first (fio's [global] then its section): fio's defaults, job:, the
// cell's matrix: axis values, then the named job's own keys. An axis therefore varies every
// named job that does not set the key itself.
#ifndef BLKBENCH_WORKLOADS_NAMED_JOBS_H_
#define BLKBENCH_WORKLOADS_NAMED_JOBS_H_

#include <string>
#include <string_view>
#include <vector>

#include "blkbench/v1/workload.pb.h"
#include "workloads/bindings.h"
#include "workloads/cell_checks.h"
#include "workloads/errors.h"
#include "workloads/job_options.h"

namespace blkbench::workloads {

// A matrix may name at most this many jobs (fio has no limit; numjobs still caps threads).
inline constexpr size_t kMaxNamedJobs = 64;

struct NamedJobDef {
  std::string name;
  Position pos;                  // of the name
  std::string group;             // "" = by the layout's order
  Position group_pos;            // of the group's value
  std::vector<Binding> options;  // single values of JobSpec options, checked
};

// True for a key a named job may set: a fio option of the JobSpec (not a queue setting,
// the cgroup layout or a target key, which are the cell's).
bool IsPerJobOption(const OptionDef& def);

// Fills cell.jobs from `jobs` (nothing when empty): each starts from cell.job (defaults,
// job: and the cell's axes) with its own keys applied and fio's fixups, and cell.job
// becomes jobs[0]'s. Call after the axes are applied, before ResolveDerivedDefaults.
void ApplyNamedJobs(const std::vector<NamedJobDef>& jobs, v1::CellSpec& cell);

// The problems of a cell's named jobs that CheckCell does not see: a group the cgroup layout
// lacks, a group named with a layout that has no names to give (root, one, per-job), some
// jobs with a group and some without, a group's jobs count not what its named jobs run.
// Each issue names its job (CellIssue::job) and keys {"group"} or {"cgroup"}.
std::vector<CellIssue> CheckNamedJobGroups(const v1::CellSpec& cell);

}  // namespace blkbench::workloads

#endif  // BLKBENCH_WORKLOADS_NAMED_JOBS_H_
