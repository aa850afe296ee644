// Named jobs (the matrix's jobs: section) applied to an expanded cell and their group checks.
#include "workloads/named_jobs.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/cell_jobs.h"
#include "common/iosched_tunables.h"
#include "common/resolved_job.h"

namespace blkbench::workloads {

bool IsPerJobOption(const OptionDef& def) {
  if (def.scope != Scope::kJob) return false;
  // The cell's own keys among the job: options: they set CellSpec fields outside `job`.
  constexpr std::string_view kCellKeys[] = {"scheduler", "nr_requests", "max_sectors_kb", "cgroup",
                                            "trace"};
  for (std::string_view key : kCellKeys) {
    if (def.canonical == key) return false;
  }
  // The scheduler's tunables (fifo_batch, slice_idle, ...) are the queue's, like nr_requests.
  return FindIoschedTunable(def.canonical) == nullptr;
}

void ApplyNamedJobs(const std::vector<NamedJobDef>& jobs, v1::CellSpec& cell) {
  if (jobs.empty()) return;
  for (const NamedJobDef& def : jobs) {
    v1::CellSpec scratch;
    *scratch.mutable_job() = cell.job();
    for (const Binding& b : def.options) {
      if (b.valid) b.def->Apply(b.values[0].text, scratch);
    }
    ApplyFioFixups(*scratch.mutable_job());
    v1::NamedJob* named = cell.add_jobs();
    named->set_name(def.name);
    named->set_group(def.group);
    *named->mutable_job() = std::move(*scratch.mutable_job());
  }
  *cell.mutable_job() = cell.jobs(0).job();
}

std::vector<CellIssue> CheckNamedJobGroups(const v1::CellSpec& cell) {
  std::vector<CellIssue> issues;
  if (cell.jobs_size() == 0) return issues;
  const v1::CgroupLayout& layout = cell.cgroup_layout();
  const v1::NamedJob* with = nullptr;
  const v1::NamedJob* without = nullptr;
  for (const v1::NamedJob& job : cell.jobs()) (job.group().empty() ? without : with) = &job;
  if (with == nullptr) return issues;
  if (layout.kind() != v1::CgroupLayout::GROUPS) {
    issues.push_back(
        {{"group", "cgroup"},
         absl::StrCat("job '", with->name(), "': group '", with->group(),
                      "' needs a cgroup layout of named groups (e.g. cgroup: '", with->group(),
                      ":100*", with->job().numjobs(), "'), got cgroup '", cell.cgroup(), "'"),
         with->name()});
    return issues;
  }
  if (without != nullptr) {
    issues.push_back({{"group"},
                      absl::StrCat("job '", without->name(), "': no group, but job '", with->name(),
                                   "' names one; give every job a group or none"),
                      without->name()});
    return issues;
  }
  std::map<std::string, uint64_t> placed;  // group -> threads of the jobs naming it
  std::vector<std::string> names;
  for (const v1::CgroupGroup& g : layout.groups()) {
    placed[g.name()] = 0;
    names.push_back(g.name());
  }
  for (const v1::NamedJob& job : cell.jobs()) {
    auto it = placed.find(job.group());
    if (it == placed.end()) {
      issues.push_back({{"group"},
                        absl::StrCat("job '", job.name(), "': unknown group '", job.group(),
                                     "' (the cgroup layout has ", absl::StrJoin(names, ", "), ")"),
                        job.name()});
      continue;
    }
    it->second += job.job().numjobs();
  }
  if (!issues.empty()) return issues;
  for (const v1::CgroupGroup& g : layout.groups()) {
    if (placed[g.name()] == g.jobs()) continue;
    issues.push_back({{"cgroup"},
                      absl::StrCat("key 'cgroup': group '", g.name(), "' is for ", g.jobs(),
                                   " jobs, but the named jobs in it run ", placed[g.name()],
                                   " (their numjobs summed)"),
                      ""});
  }
  return issues;
}

}  // namespace blkbench::workloads
