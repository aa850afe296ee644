// fio's phases (jobs after a stonewall run after the ones before them) as one matrix
// axis, when the phases differ in one option only (fio_import_jobs.h, PhasePlan).
#include <algorithm>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "workloads/fio_import.h"
#include "workloads/fio_import_jobs.h"

namespace blkbench::workloads {
namespace {

bool IsWait(const FioOption& o) {
  return o.key == "stonewall" || o.key == "wait_for_previous" || o.key == "wait_for";
}

// fio (init.c): a job with stonewall or wait_for_previous waits for every job before it;
// one with wait_for for a named one, which a cell cannot express either.
bool Waits(const FioJob& job) {
  bool waits = false;  // the last value written wins
  for (const FioOption& o : job.options) {
    if (o.key == "wait_for") {
      waits = waits || (o.has_value && !o.value.empty());
    } else if (o.key == "stonewall" || o.key == "wait_for_previous") {
      waits = !o.has_value || (o.value != "0" && !o.value.empty());
    }
  }
  return waits;
}

// fio's run_threads(): a job with stonewall (or wait_for_previous) stops fio starting
// any job until every one started has ended; one with wait_for=X only holds itself back
// until X has ended — the jobs after it start at once. A phase boundary is that only when
// X is all that runs before the job and the job after it waits too. Returns why a job's
// wait_for is not one ("" when it is, or when the job has none or also a stonewall).
std::string InexactWaitFor(const FioJobs& jobs, size_t phase_start, size_t j,
                           const FioOption** option) {
  const FioJob& job = jobs.jobs[j];
  bool stonewall = false;
  *option = nullptr;
  for (const FioOption& o : job.options) {
    if (o.key == "stonewall" || o.key == "wait_for_previous") {
      stonewall = !o.has_value || (o.value != "0" && !o.value.empty());
    } else if (o.key == "wait_for") {
      *option = o.has_value && !o.value.empty() ? &o : nullptr;
    }
  }
  if (stonewall || *option == nullptr) return "";
  const std::string& waitee = (*option)->value;
  std::vector<std::string> before;
  bool found = false;
  for (size_t k = phase_start; k < j; ++k) {
    before.push_back(absl::StrCat("'", jobs.jobs[k].name, "'"));
    found = found || jobs.jobs[k].name == waitee;
  }
  if (!found) {
    return absl::StrCat("fio starts '", job.name, "' when '", waitee,
                        "' has ended, and no job of the phase before it has that name");
  }
  if (before.size() > 1) {
    return absl::StrCat("fio starts '", job.name, "' when '", waitee, "' alone has ended, while ",
                        absl::StrJoin(before, ", "),
                        " may still run; a phase here starts when every job before it has ended");
  }
  if (j + 1 < jobs.jobs.size() && !Waits(jobs.jobs[j + 1])) {
    return absl::StrCat("fio starts '", jobs.jobs[j + 1].name, "' at once, beside '", waitee,
                        "', not after it; here it would run in the phase of '", job.name, "'");
  }
  return "";
}

// What two conversions of fio jobs differ in: the matrix keys set differently, or a
// reason they cannot be compared key by key ("" when they can).
std::string Differences(const Converted& a, const Converted& b, std::set<std::string>& keys) {
  for (const auto& [key, carried] : a.values) {
    auto it = b.values.find(key);
    if (it == b.values.end() || it->second.value != carried.value) keys.insert(key);
  }
  for (const auto& [key, carried] : b.values) {
    if (!a.values.count(key)) keys.insert(key);
  }
  std::multiset<std::string> da, db;
  for (const FioDrop& d : a.drops) da.insert(d.what);
  for (const FioDrop& d : b.drops) db.insert(d.what);
  if (da != db) return "they differ in options blkbench does not carry over";
  if (a.filename != b.filename) return "they run on different files";
  if (a.cgroup_name != b.cgroup_name || a.cgroup_weight != b.cgroup_weight) {
    return "they differ in cgroup= or cgroup_weight=";
  }
  return "";
}

}  // namespace

PhasePlan PlanPhases(const FioJobs& jobs) {
  PhasePlan plan;
  std::vector<size_t> starts = {0};
  for (size_t j = 1; j < jobs.jobs.size(); ++j) {
    if (Waits(jobs.jobs[j])) starts.push_back(j);
  }
  starts.push_back(jobs.jobs.size());
  plan.phases = starts.size() - 1;
  plan.first_phase_jobs = starts[1];
  if (plan.phases == 1) return plan;

  // A later phase is a cell run after the one before, or lost: a wait_for that is no
  // phase boundary in fio changes what runs beside what either way.
  for (size_t p = 1; p < plan.phases; ++p) {
    const FioOption* option = nullptr;
    const std::string why = InexactWaitFor(jobs, starts[p - 1], starts[p], &option);
    if (!why.empty()) {
      plan.wait_drops.push_back({option->where, absl::StrCat("wait_for=", option->value), why,
                                 /*changes_workload=*/true});
    }
  }

  const size_t n = plan.first_phase_jobs;
  std::vector<Converted> conv;
  conv.reserve(jobs.jobs.size());
  for (const FioJob& job : jobs.jobs) conv.push_back(ConvertJob(job));
  std::set<std::string> keys;
  for (size_t p = 1; p < plan.phases; ++p) {
    if (starts[p + 1] - starts[p] != n) {
      plan.no_axis_why = "its phase has another number of jobs than the first";
      return plan;
    }
    for (size_t j = 0; j < n; ++j) {
      std::string why = Differences(conv[j], conv[starts[p] + j], keys);
      if (!why.empty()) {
        plan.no_axis_why = absl::StrCat("its phase is no axis: ", why);
        return plan;
      }
    }
  }
  if (keys.size() != 1) {
    plan.no_axis_why = keys.empty() ? "its phase repeats the first (a matrix has no axis for that)"
                                    : absl::StrCat("its phase is no axis: the phases differ in ",
                                                   absl::StrJoin(keys, ", "), ", not one option");
    return plan;
  }
  const std::string& key = *keys.begin();
  std::set<std::string> seen;
  for (size_t p = 0; p < plan.phases; ++p) {
    const Converted& lead = conv[starts[p]];
    auto it = lead.values.find(key);
    bool alike = it != lead.values.end();
    for (size_t j = starts[p]; alike && j < starts[p + 1]; ++j) {
      auto other = conv[j].values.find(key);
      alike = other != conv[j].values.end() && other->second.value == it->second.value;
    }
    if (!alike || !seen.insert(it->second.value).second) {
      plan.no_axis_why = absl::StrCat("its phase is no axis: each phase needs its own ", key,
                                      ", set alike in its jobs");
      plan.axis_values.clear();
      plan.axis_sources.clear();
      return plan;
    }
    plan.axis_values.push_back(it->second.value);
    plan.axis_sources.push_back(
        absl::StrCat("[", jobs.jobs[starts[p]].name, "] (", jobs.jobs[starts[p]].where, ")"));
  }
  plan.axis_key = key;
  return plan;
}

FioJobs FirstPhase(const FioJobs& jobs, const PhasePlan& plan) {
  FioJobs first;
  first.program_options = jobs.program_options;
  for (size_t j = 0; j < plan.first_phase_jobs; ++j) {
    FioJob job = jobs.jobs[j];
    if (!plan.axis_key.empty()) {
      std::erase_if(job.options, [&](const FioOption& o) {
        return IsWait(o) || CanonicalKey(o.key) == CanonicalKey(plan.axis_key);
      });
    }
    first.jobs.push_back(std::move(job));
  }
  return first;
}

std::string PhasedName(std::string_view source, std::string_view first_job) {
  if (!source.ends_with(".fio")) return std::string(first_job);
  std::string_view stem = source.substr(0, source.size() - 4);
  if (const size_t slash = stem.rfind('/'); slash != std::string_view::npos) {
    stem = stem.substr(slash + 1);
  }
  return stem.empty() ? std::string(first_job) : std::string(stem);
}

}  // namespace blkbench::workloads
