// Cross-key checks on one expanded cell: the job rules of common/resolved_job.h, the
// cgroup layout against numjobs, and simulator-only target keys.
#include "workloads/cell_checks.h"

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "blkbench/v1/workload.pb.h"
#include "common/cell_jobs.h"
#include "common/iosched_tunables.h"
#include "common/sim_vocabulary.h"
#include "common/units.h"
#include "workloads/absl_compat.h"
#include "workloads/cgroup_layout.h"
#include "workloads/job_options.h"
#include "workloads/named_jobs.h"
#include "workloads/sim_checks.h"

namespace blkbench::workloads {

namespace {

// The checks of one job's options: fio's rules, the engines' limits and, on a simulated
// device, the options the engine does not model. `name` is the named job ("" for none).
void CheckJob(const v1::JobSpec& job, const std::string& name, const v1::Target& target,
              std::vector<CellIssue>& issues) {
  const std::string prefix = name.empty() ? "" : absl::StrCat("job '", name, "': ");
  // fio's job rules and the engines' limits: common/resolved_job.h, the one place.
  JobResolution resolved = ResolveJob(job);
  for (JobProblem& p : resolved.problems) {
    issues.push_back({std::move(p.keys), absl::StrCat(prefix, p.message), name});
  }
  if (!IsSimulated(target.device_class())) return;
  if (std::string why = SimulatedJobProblem(resolved.job);
      resolved.problems.empty() && !why.empty()) {
    issues.push_back({{"ioengine", "device_class"},
                      absl::StrCat(prefix, why, " (device_class '", target.device_class(), "')"),
                      name});
  }
  // fio options the engine's job loop does not model: an error, never silently ignored.
  const struct {
    std::string_view key;
    bool set;
  } unmodelled[] = {
      {"fsync", job.fsync() != 0},
      {"end_fsync", job.end_fsync()},
      {"nice", job.nice() != 0},
      {"random_distribution", resolved.job.distribution != RandomDist::kRandom &&
                                  resolved.job.distribution != RandomDist::kZoned &&
                                  resolved.job.distribution != RandomDist::kZonedAbs},
  };
  for (const auto& u : unmodelled) {
    if (!u.set) continue;
    issues.push_back(
        {{u.key, "device_class"},
         absl::StrCat(prefix, "key '", ToAbsl(u.key), "' is not modelled by the engine (",
                      "device_class '", target.device_class(), "'); it runs on real devices only"),
         name});
  }
}

}  // namespace

std::vector<CellIssue> CheckCell(const v1::CellSpec& cell) {
  std::vector<CellIssue> issues;
  const v1::Target& target = cell.target();
  if (cell.jobs_size() == 0) {
    CheckJob(cell.job(), "", target, issues);
  } else {
    for (const v1::NamedJob& named : cell.jobs()) {
      CheckJob(named.job(), named.name(), target, issues);
      // One run, one clock: the engine and the executor measure every job over the same
      // window (a bytes-limited job may still finish early). Jobs may start at different
      // times (startdelay, as separate fio invocations do); the window then opens once
      // the last of them has started and ramped up.
      const v1::JobSpec& first = cell.jobs(0).job();
      const struct {
        std::string_view key;
        uint64_t mine, theirs;
      } clock[] = {{"runtime", named.job().runtime_ns(), first.runtime_ns()},
                   {"ramp_time", named.job().ramp_time_ns(), first.ramp_time_ns()}};
      for (const auto& c : clock) {
        if (c.mine == c.theirs) continue;
        issues.push_back({{c.key},
                          absl::StrCat("job '", named.name(), "': ", ToAbsl(c.key), " ",
                                       FormatDurationNs(c.mine), " differs from job '",
                                       cell.jobs(0).name(), "''s ", FormatDurationNs(c.theirs),
                                       "; named jobs share the run's ", ToAbsl(c.key)),
                          named.name()});
      }
      // One launcher per run: every job's threads are threads, or every job a process.
      if (named.job().thread() != first.thread()) {
        issues.push_back({{"thread"},
                          absl::StrCat("job '", named.name(), "': thread ", named.job().thread(),
                                       " differs from job '", cell.jobs(0).name(), "''s ",
                                       first.thread(), "; named jobs share the run's thread"),
                          named.name()});
      }
    }
  }
  const uint64_t numjobs = TotalNumjobs(cell);
  if (cell.jobs_size() > 0 && numjobs > kMaxNumjobs) {
    issues.push_back({{"numjobs"},
                      absl::StrCat("the named jobs run ", numjobs,
                                   " jobs in all (numjobs summed); at most ", kMaxNumjobs),
                      cell.jobs(cell.jobs_size() - 1).name()});
  }

  // Explicit groups must place every job, each in exactly one group.
  const v1::CgroupLayout& layout = cell.cgroup_layout();
  if (layout.kind() == v1::CgroupLayout::GROUPS && CgroupJobs(layout) != numjobs) {
    issues.push_back({{"cgroup", "numjobs"},
                      absl::StrCat("key 'cgroup': expected groups whose jobs add up to numjobs (",
                                   numjobs, cell.jobs_size() > 0 ? " over the named jobs" : "",
                                   "), got '", cell.cgroup(), "' (", CgroupJobs(layout), " jobs)"),
                      ""});
  } else {
    for (CellIssue& issue : CheckNamedJobGroups(cell)) issues.push_back(std::move(issue));
  }

  const bool sim_device = IsSimulated(target.device_class());
  if (IsSimulated(target.kernel()) && !sim_device) {
    issues.push_back(
        {{"kernel", "device_class"},
         absl::StrCat("kernel '", target.kernel(), "' is a simulator profile; it needs a sim: ",
                      "device_class (e.g. 'sim:", target.device_class(), "'), got device_class '",
                      target.device_class(), "'"),
         ""});
  }
  // A simulated device takes its family's parameters as the engine's model reads them
  // (null_blk's queue_mode is only 2 there, for example); other families' are ignored.
  if (const SimDeviceDef* sim = FindSimDevice(target.device_class()); sim != nullptr) {
    const std::string prefix = absl::StrCat(ToAbsl(sim->family), ".");
    for (const auto& [key, value] : cell.device_params()) {
      if (!absl::StartsWith(key, prefix)) continue;
      std::string problem =
          DeviceParamProblem(sim->family, std::string_view(key).substr(prefix.size()), value);
      const OptionDef* def = FindOption(key);  // null_blk.*: the parser's own key
      if (problem.empty() || def == nullptr) continue;
      issues.push_back({{def->canonical, "device_class"},
                        absl::StrCat(problem, " (the engine's ", ToAbsl(sim->family), " model)"),
                        ""});
    }
  }
  if (const auto it = cell.device_params().find("engine.devices");
      sim_device && it != cell.device_params().end()) {
    uint64_t devices = 0;
    const std::string kind = target.device_class().substr(kSimPrefix.size());
    if (absl::SimpleAtoi(it->second, &devices)) {
      if (std::string why = SeveralDevicesProblem(kind, cell.queue().scheduler(), devices);
          !why.empty()) {
        const bool sched = !cell.queue().scheduler().empty() && cell.queue().scheduler() != "none";
        issues.push_back({{sched ? "scheduler" : "device_class"}, std::move(why), ""});
      }
    }
  }
  // The scheduler's tunables: the chosen scheduler's own, in the kernel's era (known for a
  // sim: kernel only), and on a simulated device only values the engine models.
  int version = 0;
  if (sim_device) {
    if (absl::StatusOr<SimKernel> k = ParseSimKernel(target.kernel()); k.ok()) {
      version = k->major * 100 + k->minor;
    }
  }
  for (IoschedProblem& p : CheckIoschedTunables(cell.queue(), version, sim_device)) {
    const OptionDef* def = FindOption(p.name);
    if (def == nullptr) continue;  // every tunable has a row (job_options.cc)
    std::vector<std::string_view> keys = {def->canonical};
    if (!p.other_key.empty()) keys.push_back(p.other_key);
    issues.push_back({std::move(keys), std::move(p.message), ""});
  }
  if (!target.machine().empty() && !sim_device) {
    issues.push_back({{"machine", "device_class"},
                      absl::StrCat("machine '", target.machine(),
                                   "' is an engine profile; it needs a sim: device_class, got '",
                                   target.device_class(), "'"),
                      ""});
  }
  return issues;
}

}  // namespace blkbench::workloads
