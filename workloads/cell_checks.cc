// Cross-key checks on one expanded cell. fio silently clamps some of these (init.c
// fixup_options); a matrix that asks for the impossible is more likely a typo, so we
// refuse it instead.
#include "workloads/cell_checks.h"

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "blkbench/v1/workload.pb.h"
#include "workloads/absl_compat.h"
#include "workloads/cgroup_layout.h"
#include "workloads/job_options.h"

namespace blkbench::workloads {
namespace {

void CheckSectorAligned(const v1::JobSpec& job, std::string_view key, uint64_t value,
                        std::vector<CellIssue>& issues) {
  if (job.direct() && value % kSectorSize != 0) {
    issues.push_back({{key, "direct"},
                      absl::StrCat("with direct=1, ", ToAbsl(key),
                                   " must be a multiple of 512 (got ", value, " bytes)")});
  }
}

}  // namespace

std::vector<CellIssue> CheckCell(const v1::CellSpec& cell) {
  std::vector<CellIssue> issues;
  const v1::JobSpec& job = cell.job();

  if (job.time_based() && job.runtime_ns() == 0) {
    issues.push_back({{"runtime", "time_based"},
                      "time_based=1 needs a runtime > 0 (otherwise the job never ends)"});
  }
  // fio clamps iodepth_batch to iodepth; a larger value here is a mistake.
  if (job.iodepth_batch_submit() > job.iodepth()) {
    issues.push_back({{"iodepth_batch_submit", "iodepth"},
                      absl::StrCat("iodepth_batch_submit (", job.iodepth_batch_submit(),
                                   ") is larger than iodepth (", job.iodepth(), ")")});
  }
  if (job.iodepth_batch_complete_min() > job.iodepth_batch_complete_max()) {
    issues.push_back({{"iodepth_batch_complete_min", "iodepth_batch_complete_max"},
                      absl::StrCat("iodepth_batch_complete_min (", job.iodepth_batch_complete_min(),
                                   ") is larger than iodepth_batch_complete_max (",
                                   job.iodepth_batch_complete_max(), ")")});
  }
  if (job.iodepth_batch_complete_min() > job.iodepth()) {
    issues.push_back({{"iodepth_batch_complete_min", "iodepth"},
                      absl::StrCat("iodepth_batch_complete_min (", job.iodepth_batch_complete_min(),
                                   ") is larger than iodepth (", job.iodepth(), ")")});
  }
  CheckSectorAligned(job, "size", job.size(), issues);
  CheckSectorAligned(job, "offset", job.offset(), issues);
  CheckSectorAligned(job, "offset_increment", job.offset_increment(), issues);

  // io_uring-only switches (fio engines/io_uring.c options) mean nothing to psync.
  if (job.ioengine() != v1::IO_URING) {
    const std::pair<std::string_view, bool> uring_only[] = {{"hipri", job.hipri()},
                                                            {"fixedbufs", job.fixedbufs()},
                                                            {"registerfiles", job.registerfiles()},
                                                            {"sqthread_poll", job.sqthread_poll()}};
    for (const auto& [key, set] : uring_only) {
      if (set) {
        issues.push_back(
            {{key, "ioengine"},
             absl::StrCat(ToAbsl(key), " is an io_uring option; it needs ioengine: io_uring")});
      }
    }
  }

  // Explicit groups must place every job, each in exactly one group.
  const v1::CgroupLayout& layout = cell.cgroup_layout();
  if (layout.kind() == v1::CgroupLayout::GROUPS && CgroupJobs(layout) != job.numjobs()) {
    issues.push_back(
        {{"cgroup", "numjobs"},
         absl::StrCat("key 'cgroup': expected groups whose jobs add up to numjobs (", job.numjobs(),
                      "), got '", cell.cgroup(), "' (", CgroupJobs(layout), " jobs)")});
  }

  const v1::Target& target = cell.target();
  const bool sim_device = absl::StartsWith(target.device_class(), "sim:");
  if (absl::StartsWith(target.kernel(), "sim:") && !sim_device) {
    issues.push_back(
        {{"kernel", "device_class"},
         absl::StrCat("kernel '", target.kernel(), "' is a simulator profile; it needs a sim: ",
                      "device_class (e.g. 'sim:", target.device_class(), "'), got device_class '",
                      target.device_class(), "'")});
  }
  if (!target.machine().empty() && !sim_device) {
    issues.push_back({{"machine", "device_class"},
                      absl::StrCat("machine '", target.machine(),
                                   "' is an engine profile; it needs a sim: device_class, got '",
                                   target.device_class(), "'")});
  }
  return issues;
}

}  // namespace blkbench::workloads
