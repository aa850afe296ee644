// Derivation of EngineConfig from a CellSpec: kernel strings, CPU lists, job defaults.
#include "engine/model/config.h"

#include <algorithm>
#include <charconv>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/cell_jobs.h"
#include "common/iosched_tunables.h"
#include "common/resolved_job.h"
#include "common/sim_vocabulary.h"

namespace blkbench::engine {
namespace {

bool ParseInt(std::string_view s, int* out) {
  if (s.empty()) return false;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && ptr == s.data() + s.size() && *out >= 0;
}

std::string Str(std::string_view s) { return std::string(s); }

}  // namespace

const std::vector<std::string>& KnownPatches() {
  static const std::vector<std::string>* const kPatches = [] {
    auto* names = new std::vector<std::string>;
    for (const PatchFlagDef& f : PatchFlags()) names->emplace_back(f.name);
    return names;
  }();
  return *kPatches;
}

absl::StatusOr<KernelSpec> ParseKernel(std::string_view kernel) {
  // The syntax and the flag names are common/sim_vocabulary's; here each name switches
  // its modelled change on.
  absl::StatusOr<SimKernel> parsed = ParseSimKernel(kernel);
  if (!parsed.ok()) return parsed.status();
  KernelSpec spec;
  spec.major = parsed->major;
  spec.minor = parsed->minor;
  spec.patches = std::move(parsed->patches);
  // The core's flags (those of every scheduler); a scheduler's own are its factory's.
  const std::pair<std::string_view, bool*> flags[] = {
      {"plug-batch-retry", &spec.plug_batch_retry},
      {"split-whole-bio", &spec.split_whole_bio},
      {"wake-by-tags", &spec.wake_by_tags},
      {"tag-no-preempt", &spec.tag_no_preempt},
  };
  for (const std::string& patch : spec.patches) {
    bool known = false;
    for (const auto& [name, flag] : flags) {
      if (patch == name) *flag = known = true;
    }
    if (const PatchFlagDef* def = FindPatchFlag(patch);
        def != nullptr && !def->schedulers.empty()) {
      known = true;  // the scheduler's (engine/model/vocabulary_test.cc checks it reads it)
    }
    // A core flag in the vocabulary that the model does not implement (config_test.cc
    // keeps the two lists equal).
    if (!known) {
      return absl::InternalError(
          absl::StrCat("kernel \"", Str(kernel), "\": patch \"", patch, "\" is not modelled"));
    }
  }
  return spec;
}

absl::StatusOr<std::vector<int>> ParseCpuList(std::string_view list, int nr_cpus) {
  std::vector<int> cpus;
  std::string_view rest = list;
  while (!rest.empty()) {
    const size_t comma = rest.find(',');
    std::string_view item = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    const size_t dash = item.find('-');
    int lo = 0;
    int hi = 0;
    const bool ok = dash == std::string_view::npos ? ParseInt(item, &lo) && ParseInt(item, &hi)
                                                   : ParseInt(item.substr(0, dash), &lo) &&
                                                         ParseInt(item.substr(dash + 1), &hi);
    if (!ok || lo > hi) {
      return absl::InvalidArgumentError(absl::StrCat("cpus_allowed \"", Str(list), "\": \"",
                                                     Str(item), "\" is not a CPU or range"));
    }
    if (hi >= nr_cpus) {
      return absl::InvalidArgumentError(absl::StrCat("cpus_allowed \"", Str(list), "\": CPU ", hi,
                                                     " >= the machine's ", nr_cpus, " CPUs"));
    }
    for (int c = lo; c <= hi; ++c) cpus.push_back(c);
  }
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  if (cpus.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("cpus_allowed \"", Str(list), "\" is empty"));
  }
  return cpus;
}

absl::StatusOr<EngineConfig> DeriveConfig(const v1::CellSpec& cell) {
  EngineConfig c;
  const std::string& dc = cell.target().device_class();
  if (!IsSimulated(dc) || FindSimDevice(dc) == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        "device_class \"", dc, "\": the engine runs only the simulated devices ", SimDeviceList()));
  }
  c.device_kind = dc.substr(kSimPrefix.size());
  if (!cell.target().machine().empty()) c.machine = cell.target().machine();
  c.machine_profile = cell.target().machine_profile();
  // A matrix may carry parameters for several device families (an axis over device
  // classes): each model takes only its own family's ("ssd.*" for ssd and ssd-sata).
  const std::string family(FindSimDevice(dc)->family);
  for (const auto& [key, value] : cell.device_params()) {
    if (key.rfind(family + ".", 0) == 0) c.device_params[key] = value;
    if (key == "engine.can_queue") {
      int v = 0;
      if (!ParseInt(value, &v) || v == 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("engine.can_queue \"", value, "\" is not a positive integer"));
      }
      c.queue.can_queue = static_cast<uint32_t>(v);
    }
    if (key == "engine.rq_affinity" &&
        (!ParseInt(value, &c.queue.rq_affinity) || c.queue.rq_affinity > 2)) {
      return absl::InvalidArgumentError(
          absl::StrCat("engine.rq_affinity \"", value, "\" is not 0, 1 or 2"));
    }
    if (key == "engine.irq_cpu" && !ParseInt(value, &c.queue.irq_cpu)) {
      return absl::InvalidArgumentError(
          absl::StrCat("engine.irq_cpu \"", value, "\" is not a CPU number"));
    }
    if (key == "engine.devices") {
      int v = 0;
      if (!ParseInt(value, &v) || v == 0 || static_cast<uint64_t>(v) > kMaxSimDevices) {
        return absl::InvalidArgumentError(
            absl::StrCat("engine.devices \"", value, "\" is not from 1 to ", kMaxSimDevices));
      }
      c.queue.devices = static_cast<uint32_t>(v);
    }
  }
  absl::StatusOr<KernelSpec> kernel = ParseKernel(cell.target().kernel());
  if (!kernel.ok()) return kernel.status();
  c.kernel = *std::move(kernel);

  const v1::QueueSettings& q = cell.queue();
  if (!q.scheduler().empty()) {
    if (!IsKnownScheduler(q.scheduler())) {
      std::vector<std::string> names(Schedulers().begin(), Schedulers().end() - 1);
      return absl::InvalidArgumentError(
          absl::StrCat("scheduler \"", q.scheduler(), "\": the engine models ",
                       absl::StrJoin(names, ", "), " and ", std::string(Schedulers().back())));
    }
    c.queue.scheduler = q.scheduler();
  }
  if (std::string why = SeveralDevicesProblem(c.device_kind, c.queue.scheduler, c.queue.devices);
      !why.empty()) {
    return absl::InvalidArgumentError(why);
  }
  // The tunables must be the scheduler's, of the kernel's era, with values the model
  // runs: what validate checks, checked again for a cell that did not come through it.
  if (std::vector<IoschedProblem> problems =
          CheckIoschedTunables(q, c.kernel.version(), /*simulated=*/true);
      !problems.empty()) {
    return absl::InvalidArgumentError(problems.front().message);
  }
  for (const auto& [name, value] : q.iosched()) {
    const IoschedTunableDef* def = FindIoschedTunable(name);
    if (def == nullptr || CanonicalIoschedValue(*def, value) != value) {
      return absl::InvalidArgumentError(
          absl::StrCat("iosched tunable ", name, " = \"", value, "\" is not one the engine takes"));
    }
    c.queue.iosched[name] = value;
  }
  c.queue.nr_requests = q.nr_requests();
  c.queue.max_sectors = (q.max_sectors_kb() ? q.max_sectors_kb() : kDefaultMaxSectorsKb) * 2;

  c.threads = cell.job().thread();
  // Groups 1..n in layout order; each thread in its job's group (common/cell_jobs.h).
  for (const v1::CgroupGroup& g : cell.cgroup_layout().groups()) {
    c.cgroups.weights.push_back(g.weight() ? g.weight() : 100);
  }
  for (uint32_t g : ThreadGroups(cell)) c.cgroups.job_group.push_back(g + 1);
  for (const CellJob& cj : CellJobs(cell)) {
    // fio's defaults, fixups and limits: common/resolved_job.h, as the executor has them.
    absl::StatusOr<ResolvedJob> resolved = ResolveJobOrError(*cj.spec);
    if (!resolved.ok()) {
      if (cj.name.empty()) return resolved.status();
      return absl::InvalidArgumentError(
          absl::StrCat("job '", cj.name, "': ", resolved.status().message()));
    }
    if (std::string why = SimulatedJobProblem(*resolved); !why.empty()) {
      return absl::InvalidArgumentError(
          cj.name.empty() ? why : absl::StrCat("job '", cj.name, "': ", why));
    }
    JobOptions& o = c.jobs.emplace_back();
    static_cast<ResolvedJob&>(o) = *std::move(resolved);
    o.name = cj.name;
    o.complete_min = std::max(1u, o.complete_min);
    o.complete_max = std::max(o.complete_min, o.complete_max);
    if (!o.time_based) {
      o.bytes_per_job = o.io_size ? o.io_size : o.size;
      if (o.runtime_ns == 0 && o.bytes_per_job == 0) o.runtime_ns = kDefaultRuntimeNs;
    }
    // One clock per run: named jobs share ramp_time (the parser checks it).
    if (o.ramp_ns != c.jobs[0].ramp_ns) {
      return absl::InvalidArgumentError(absl::StrCat(
          "job '", o.name, "': ramp_time ", o.ramp_ns, " ns differs from job '", c.jobs[0].name,
          "''s ", c.jobs[0].ramp_ns, " ns; named jobs share the run's clock"));
    }
  }
  // fio startdelay: the jobs start late and ramp_time (then the runtime) counts from
  // there; the model starts each job's tasks at its startdelay and measures from the
  // latest startdelay + ramp (as the executor measures named jobs started apart).
  uint64_t last_start = 0;
  for (const JobOptions& o : c.jobs) last_start = std::max(last_start, o.startdelay_ns);
  for (JobOptions& o : c.jobs) o.ramp_ns += last_start;
  c.job = c.jobs[0];
  // The run lasts as long as its longest job; a shorter time_based job is not modelled.
  for (const JobOptions& o : c.jobs) c.job.runtime_ns = std::max(c.job.runtime_ns, o.runtime_ns);
  return c;
}

}  // namespace blkbench::engine
