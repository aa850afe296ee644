// Bounds of a CellSpec; see cell_bounds.h.
#include "workloads/cell_bounds.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/sim_vocabulary.h"
#include "workloads/cell_checks.h"
#include "workloads/cgroup_layout.h"
#include "workloads/job_options.h"

namespace blkbench::workloads {

absl::Status CheckCellBounds(const v1::CellSpec& cell) {
  std::vector<std::string> issues;
  const v1::JobSpec& job = cell.job();
  auto range = [&](const char* key, uint64_t v, uint64_t lo, uint64_t hi) {
    if (v < lo || v > hi)
      issues.push_back(absl::StrCat(key, " ", v, " (expected ", lo, " to ", hi, ")"));
  };
  // 0 is "unset" in the protobuf (the executor then uses fio's default), so the lower
  // bounds the parser enforces on text hold here only for what is set.
  range("iodepth", job.iodepth(), 0, kMaxIodepth);
  range("numjobs", job.numjobs(), 0, kMaxNumjobs);
  range("iodepth_batch_submit", job.iodepth_batch_submit(), 0, kMaxIodepth);
  range("iodepth_batch_complete_min", job.iodepth_batch_complete_min(), 0, kMaxIodepth);
  range("iodepth_batch_complete_max", job.iodepth_batch_complete_max(), 0, kMaxIodepth);
  range("rwmixread", job.rwmixread(), 0, 100);
  range("trace", cell.trace(), 0, kMaxTrace);
  if (job.bs() % kSectorSize != 0) {
    issues.push_back(absl::StrCat("bs ", job.bs(), " (expected a multiple of ", kSectorSize, ")"));
  }
  const std::string& sched = cell.queue().scheduler();
  if (!sched.empty() && !IsKnownScheduler(sched)) {
    std::vector<absl::string_view> names;
    for (std::string_view s : Schedulers()) names.emplace_back(s.data(), s.size());
    const absl::string_view last = names.back();
    names.pop_back();
    issues.push_back(absl::StrCat("scheduler '", sched, "' (expected ", absl::StrJoin(names, ", "),
                                  " or ", last, ")"));
  }
  if (cell.has_cgroup_layout() && job.numjobs() > 0) {
    if (absl::Status s = ValidateCgroupLayout(cell.cgroup_layout(), job.numjobs()); !s.ok()) {
      issues.push_back(absl::StrCat("cgroup: ", s.message()));
    }
  }
  if (issues.empty()) {
    for (const CellIssue& i : CheckCell(cell)) issues.push_back(i.message);
  }
  if (issues.empty()) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("cell out of bounds: ", absl::StrJoin(issues, "; ")));
}

}  // namespace blkbench::workloads
