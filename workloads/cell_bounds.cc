// Bounds of a CellSpec; see cell_bounds.h.
#include "workloads/cell_bounds.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/cell_jobs.h"
#include "common/job_bounds.h"
#include "common/sim_vocabulary.h"
#include "workloads/cell_checks.h"
#include "workloads/cgroup_layout.h"
#include "workloads/job_options.h"
#include "workloads/named_jobs.h"

namespace blkbench::workloads {

absl::Status CheckCellBounds(const v1::CellSpec& cell) {
  std::vector<std::string> issues;
  auto range = [&](const std::string& key, uint64_t v, uint64_t lo, uint64_t hi) {
    if (v < lo || v > hi)
      issues.push_back(absl::StrCat(key, " ", v, " (expected ", lo, " to ", hi, ")"));
  };
  // 0 is "unset" in the protobuf (the executor then uses fio's default), so the lower
  // bounds the parser enforces on text hold here only for what is set.
  if (static_cast<size_t>(cell.jobs_size()) > kMaxNamedJobs) {
    issues.push_back(absl::StrCat(cell.jobs_size(), " named jobs (at most ", kMaxNamedJobs, ")"));
  }
  for (const CellJob& cj : CellJobs(cell)) {
    const v1::JobSpec& job = *cj.spec;
    const std::string p = cj.name.empty() ? "" : absl::StrCat("job '", cj.name, "' ");
    range(p + "iodepth", job.iodepth(), 0, kMaxIodepth);
    range(p + "numjobs", job.numjobs(), 0, kMaxNumjobs);
    range(p + "iodepth_batch_submit", job.iodepth_batch_submit(), 0, kMaxIodepth);
    range(p + "iodepth_batch_complete_min", job.iodepth_batch_complete_min(), 0, kMaxIodepth);
    range(p + "iodepth_batch_complete_max", job.iodepth_batch_complete_max(), 0, kMaxIodepth);
    range(p + "rwmixread", job.rwmixread(), 0, 100);
    if (job.bs() % kSectorSize != 0) {
      issues.push_back(
          absl::StrCat(p, "bs ", job.bs(), " (expected a multiple of ", kSectorSize, ")"));
    }
  }
  const uint64_t numjobs = TotalNumjobs(cell);
  if (cell.jobs_size() > 0) range("numjobs summed over the named jobs", numjobs, 1, kMaxNumjobs);
  range("trace", cell.trace(), 0, kMaxTrace);
  range("nr_requests", cell.queue().nr_requests(), 0, kMaxNrRequests);
  const std::string& sched = cell.queue().scheduler();
  if (!sched.empty() && !IsKnownScheduler(sched)) {
    std::vector<absl::string_view> names;
    for (std::string_view s : Schedulers()) names.emplace_back(s.data(), s.size());
    const absl::string_view last = names.back();
    names.pop_back();
    issues.push_back(absl::StrCat("scheduler '", sched, "' (expected ", absl::StrJoin(names, ", "),
                                  " or ", last, ")"));
  }
  if (cell.has_cgroup_layout() && (cell.jobs_size() > 0 || cell.job().numjobs() > 0) &&
      numjobs <= kMaxNumjobs) {
    if (absl::Status s = ValidateCgroupLayout(cell.cgroup_layout(), static_cast<uint32_t>(numjobs));
        !s.ok()) {
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
