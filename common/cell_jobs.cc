// CellJobs, TotalNumjobs and ThreadGroups: one flattening of a cell's jobs for every layer.
#include "common/cell_jobs.h"

#include <algorithm>

namespace blkbench {

std::vector<CellJob> CellJobs(const v1::CellSpec& cell) {
  std::vector<CellJob> jobs;
  uint32_t thread = 0;
  if (cell.jobs_size() == 0) {
    jobs.push_back({"", &cell.job(), "", 0});
    return jobs;
  }
  for (const v1::NamedJob& named : cell.jobs()) {
    jobs.push_back({named.name(), &named.job(), named.group(), thread});
    thread += std::max<uint32_t>(named.job().numjobs(), 1);
  }
  return jobs;
}

uint64_t TotalNumjobs(const v1::CellSpec& cell) {
  if (cell.jobs_size() == 0) return std::max<uint32_t>(cell.job().numjobs(), 1);
  uint64_t total = 0;
  for (const v1::NamedJob& named : cell.jobs())
    total += std::max<uint32_t>(named.job().numjobs(), 1);
  return total;
}

std::vector<uint32_t> ThreadGroups(const v1::CellSpec& cell) {
  const v1::CgroupLayout& layout = cell.cgroup_layout();
  std::vector<uint32_t> out;
  if (layout.groups_size() == 0) return out;
  const uint32_t last = static_cast<uint32_t>(layout.groups_size() - 1);
  // Slots left per group for threads placed by order.
  std::vector<uint64_t> left;
  for (const v1::CgroupGroup& g : layout.groups()) left.push_back(g.jobs());
  auto find = [&](const std::string& name) {
    for (uint32_t g = 0; g <= last; ++g) {
      if (layout.groups(static_cast<int>(g)).name() == name) return g;
    }
    return last;
  };
  for (const CellJob& job : CellJobs(cell)) {
    if (job.group.empty()) continue;
    const uint32_t g = find(job.group);
    const uint64_t n = std::max<uint32_t>(job.spec->numjobs(), 1);
    left[g] -= std::min(left[g], n);
  }
  uint32_t next = 0;
  for (const CellJob& job : CellJobs(cell)) {
    const uint32_t n = std::max<uint32_t>(job.spec->numjobs(), 1);
    for (uint32_t t = 0; t < n; ++t) {
      if (!job.group.empty()) {
        out.push_back(find(job.group));
        continue;
      }
      while (next < last && left[next] == 0) ++next;
      if (left[next] > 0) --left[next];
      out.push_back(next);
    }
  }
  return out;
}

}  // namespace blkbench
