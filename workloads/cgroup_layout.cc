// Parsing and completion of the matrix's cgroup layouts; see cgroup_layout.h.
#include "workloads/cgroup_layout.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/units.h"
#include "workloads/absl_compat.h"
#include "workloads/job_options.h"

namespace blkbench::workloads {
namespace {

using v1::CgroupLayout;

absl::Status Bad(std::string_view item, std::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat("'", ToAbsl(item), "': ", ToAbsl(why)));
}

absl::StatusOr<uint32_t> ParseWeight(std::string_view item, std::string_view s) {
  absl::StatusOr<uint64_t> v = ParseUint(s);
  if (!v.ok() || *v < kMinCgroupWeight || *v > kMaxCgroupWeight) {
    return Bad(item, absl::StrCat("weight '", ToAbsl(s), "' is not an integer from ",
                                  kMinCgroupWeight, " to ", kMaxCgroupWeight));
  }
  return static_cast<uint32_t>(*v);
}

absl::Status CheckName(std::string_view item, std::string_view name) {
  if (name.empty() || name.size() > kMaxCgroupNameLength) {
    return Bad(item, absl::StrCat("a group name needs 1 to ", kMaxCgroupNameLength, " characters"));
  }
  for (char c : name) {
    if (!absl::ascii_islower(static_cast<unsigned char>(c)) &&
        !absl::ascii_isdigit(static_cast<unsigned char>(c)) && c != '_' && c != '-') {
      return Bad(item, "a group name may only hold a-z, 0-9, _ and -");
    }
  }
  // Files every cgroup v1 directory has; a group of that name could not be created.
  for (std::string_view reserved : {"tasks", "notify_on_release", "release_agent"}) {
    if (name == reserved) return Bad(item, "that name is a cgroup control file");
  }
  return absl::OkStatus();
}

// "name:weight*jobs"
absl::StatusOr<v1::CgroupGroup> ParseGroup(std::string_view item) {
  const size_t colon = item.find(':');
  const size_t star = item.find('*');
  if (colon == std::string_view::npos || star == std::string_view::npos || star < colon) {
    return Bad(item, "expected name:weight*jobs");
  }
  const std::string_view name = item.substr(0, colon);
  if (absl::Status s = CheckName(item, name); !s.ok()) return s;
  absl::StatusOr<uint32_t> weight = ParseWeight(item, item.substr(colon + 1, star - colon - 1));
  if (!weight.ok()) return weight.status();
  const std::string_view jobs_text = item.substr(star + 1);
  absl::StatusOr<uint64_t> jobs = ParseUint(jobs_text);
  if (!jobs.ok() || *jobs < 1 || *jobs > kMaxNumjobs) {
    return Bad(item, absl::StrCat("jobs '", ToAbsl(jobs_text), "' is not an integer from 1 to ",
                                  kMaxNumjobs));
  }
  v1::CgroupGroup group;
  group.set_name(std::string(name));
  group.set_weight(*weight);
  group.set_jobs(static_cast<uint32_t>(*jobs));
  return group;
}

}  // namespace

absl::StatusOr<CgroupLayout> ParseCgroupLayout(std::string_view text) {
  CgroupLayout layout;
  if (text == "root") {
    layout.set_kind(CgroupLayout::ROOT);
    return layout;
  }
  if (text == "per-job") {
    layout.set_kind(CgroupLayout::PER_JOB);
    return layout;
  }
  if (text == "one" || text.starts_with("one:")) {
    layout.set_kind(CgroupLayout::ONE);
    uint32_t weight = kDefaultCgroupWeight;
    if (text != "one") {
      absl::StatusOr<uint32_t> w = ParseWeight(text, text.substr(4));
      if (!w.ok()) return w.status();
      weight = *w;
    }
    v1::CgroupGroup* group = layout.add_groups();
    group->set_name("g0");
    group->set_weight(weight);
    return layout;
  }
  layout.set_kind(CgroupLayout::GROUPS);
  for (absl::string_view raw : absl::StrSplit(ToAbsl(text), ',')) {
    const absl::string_view item = absl::StripAsciiWhitespace(raw);
    absl::StatusOr<v1::CgroupGroup> group = ParseGroup(std::string_view(item.data(), item.size()));
    if (!group.ok()) return group.status();
    for (const v1::CgroupGroup& earlier : layout.groups()) {
      if (earlier.name() == group->name()) {
        return absl::InvalidArgumentError(
            absl::StrCat("group name '", group->name(), "' is used twice"));
      }
    }
    *layout.add_groups() = std::move(*group);
  }
  return layout;
}

void FillCgroupGroups(uint32_t numjobs, CgroupLayout& layout) {
  switch (layout.kind()) {
    case CgroupLayout::ONE:
      if (layout.groups_size() == 0) {
        layout.add_groups()->set_name("g0");
        layout.mutable_groups(0)->set_weight(kDefaultCgroupWeight);
      }
      layout.mutable_groups(0)->set_jobs(numjobs);
      break;
    case CgroupLayout::PER_JOB:
      layout.clear_groups();
      for (uint32_t j = 0; j < numjobs; ++j) {
        v1::CgroupGroup* group = layout.add_groups();
        group->set_name(absl::StrCat("j", j));
        group->set_weight(kDefaultCgroupWeight);
        group->set_jobs(1);
      }
      break;
    default:
      break;
  }
}

absl::Status ValidateCgroupLayout(const CgroupLayout& layout, uint32_t numjobs) {
  if (layout.kind() == CgroupLayout::ROOT) {
    if (layout.groups_size() == 0) return absl::OkStatus();
    return absl::InvalidArgumentError("a root cgroup layout has no groups");
  }
  if (layout.groups_size() == 0)
    return absl::InvalidArgumentError("the cgroup layout has no groups");
  for (int i = 0; i < layout.groups_size(); ++i) {
    const v1::CgroupGroup& group = layout.groups(i);
    const std::string item = absl::StrCat(group.name(), ":", group.weight(), "*", group.jobs());
    if (absl::Status s = CheckName(item, group.name()); !s.ok()) return s;
    if (group.weight() < kMinCgroupWeight || group.weight() > kMaxCgroupWeight) {
      return Bad(item,
                 absl::StrCat("weight is not from ", kMinCgroupWeight, " to ", kMaxCgroupWeight));
    }
    if (group.jobs() < 1) return Bad(item, "a group needs at least one job");
    for (int j = 0; j < i; ++j) {
      if (layout.groups(j).name() == group.name()) {
        return absl::InvalidArgumentError(
            absl::StrCat("group name '", group.name(), "' is used twice"));
      }
    }
  }
  if (CgroupJobs(layout) != numjobs) {
    return absl::InvalidArgumentError(absl::StrCat("the cgroup layout places ", CgroupJobs(layout),
                                                   " jobs, but the cell has ", numjobs));
  }
  return absl::OkStatus();
}

uint64_t CgroupJobs(const CgroupLayout& layout) {
  uint64_t jobs = 0;
  for (const v1::CgroupGroup& group : layout.groups()) jobs += group.jobs();
  return jobs;
}

}  // namespace blkbench::workloads
