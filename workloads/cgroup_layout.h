// The matrix's `cgroup` key: root, one[:weight], per-job, or explicit groups written as
// one scalar ("heavy:1000*1,light:100*3", name:weight*jobs) so a layout can be an axis
// value. Parsed into CellSpec.cgroup_layout; groups are filled for every kind.
#ifndef BLKBENCH_WORKLOADS_CGROUP_LAYOUT_H_
#define BLKBENCH_WORKLOADS_CGROUP_LAYOUT_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "blkbench/v1/workload.pb.h"

namespace blkbench::workloads {

// The kernel's bfq/io weight range (BFQ_MIN_WEIGHT, BFQ_MAX_WEIGHT; CGROUP_WEIGHT_DFL).
inline constexpr uint32_t kMinCgroupWeight = 1;
inline constexpr uint32_t kMaxCgroupWeight = 1000;
inline constexpr uint32_t kDefaultCgroupWeight = 100;
// Group names become directory names; long ones only make paths unreadable.
inline constexpr size_t kMaxCgroupNameLength = 64;

// Parses a layout as written. ROOT: no groups. ONE: one group "g0" with the weight
// given after "one:" (default 100) and jobs 0 until FillCgroupGroups. PER_JOB: no groups
// until FillCgroupGroups. GROUPS: the groups as written, in order. Whitespace around
// items is ignored. InvalidArgument (saying what is wrong) for anything else: weights
// outside 1..1000, jobs outside 1..4096, names empty, longer than 64, not made of
// [a-z0-9_-], or a cgroup v1 control file name ("tasks", "notify_on_release",
// "release_agent"), and a name used twice.
absl::StatusOr<v1::CgroupLayout> ParseCgroupLayout(std::string_view text);

// Completes a parsed layout for a cell of `numjobs` jobs: ONE gets all jobs in its group;
// PER_JOB gets groups "j0".."j<numjobs-1>", weight 100, one job each. ROOT and GROUPS
// are left as they are. Idempotent.
void FillCgroupGroups(uint32_t numjobs, v1::CgroupLayout& layout);

// Checks a completed layout as a consumer must before making directories from it (the agent
// trusts no name it is sent): ROOT has no groups; otherwise every group's name is valid as
// ParseCgroupLayout requires and unique, its weight within 1..1000, its jobs at least 1, and
// the jobs add up to `numjobs`. InvalidArgument saying what is wrong.
absl::Status ValidateCgroupLayout(const v1::CgroupLayout& layout, uint32_t numjobs);

// The jobs the layout's groups place, summed (the cell is consistent when this equals
// numjobs; ROOT places none and needs nothing).
uint64_t CgroupJobs(const v1::CgroupLayout& layout);

}  // namespace blkbench::workloads

#endif  // BLKBENCH_WORKLOADS_CGROUP_LAYOUT_H_
