// JobSpec → per-job plans: the resolved job (common/resolved_job.h) placed on the target —
// region math and what depends on the device and this machine.
#include "agent/executor/job_plan.h"

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <limits>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "agent/executor/cpu_list.h"
#include "common/cell_jobs.h"
#include "common/resolved_job.h"

namespace blkbench {
namespace {

bool MulOverflows(uint64_t a, uint64_t b, uint64_t* out) {
  return __builtin_mul_overflow(a, b, out);
}

absl::Status FillAffinity(const std::string& list, JobPlan* base) {
  const long conf = sysconf(_SC_NPROCESSORS_CONF);
  const uint32_t max_cpus =
      static_cast<uint32_t>(std::clamp<long>(conf > 0 ? conf : CPU_SETSIZE, 1, CPU_SETSIZE));
  absl::StatusOr<std::vector<uint32_t>> cpus = ParseCpuList(list, max_cpus);
  if (!cpus.ok()) return cpus.status();
  CPU_ZERO(&base->cpus);
  for (uint32_t c : *cpus) CPU_SET(c, &base->cpus);
  base->has_affinity = !cpus->empty();
  return absl::OkStatus();
}

// Adds the threads of job `named` (resolved as `r`) to `plan`, the first being thread
// `first` of the cell.
absl::Status PlanJob(const RunContext& ctx, const ResolvedJob& r, uint32_t named, uint32_t first,
                     RunPlan& plan) {
  const std::string who =
      plan.names[named].empty() ? "job " : absl::StrCat("job '", plan.names[named], "' ");
  auto Invalid = [&](const std::string& option, const std::string& why) {
    return absl::InvalidArgumentError(absl::StrCat(who, "option ", option, ": ", why));
  };
  // What depends on the target: its logical block size for direct I/O, its size for the
  // regions (below), this machine's CPUs for the affinity.
  const uint64_t bs = r.bs;
  const uint32_t lbs = std::max<uint32_t>(ctx.logical_block_size, 1);
  auto Unaligned = [&](const char* option, uint64_t size) {
    return Invalid(option, absl::StrCat(size, " is not a multiple of the logical block size ", lbs,
                                        " (direct=1)"));
  };
  if (r.direct) {
    for (const BlockSizes& d : r.sizes) {  // reads', then writes'
      if (d.min % lbs != 0) return Unaligned("bs", d.min);
      for (const BsShare& e : d.split) {
        if (e.bs % lbs != 0) return Unaligned("bssplit", e.bs);
      }
      if (d.max % lbs != 0) return Unaligned("bsrange", d.max);
      if (d.align % lbs != 0) return Unaligned("blockalign", d.align);
    }
  }
  const uint32_t numjobs = r.numjobs;

  JobPlan base;
  // The split pointers: executor.cc, once the plan's ResolvedJobs stay put.
  base.io.block_size = r.sizes[0].min;
  base.io.bs_max = r.sizes[0].max;
  base.io.bssplit_len = static_cast<uint32_t>(r.sizes[0].split.size());
  base.io.block_align = r.sizes[0].align;
  if (r.per_direction_bs()) {
    base.io.write_block_align = r.sizes[1].align;
    base.io.write_block_size = r.sizes[1].min;
    base.io.write_bs_max = r.sizes[1].max;
    base.io.write_bssplit_len = static_cast<uint32_t>(r.sizes[1].split.size());
  }
  base.io.random = r.random;
  base.io.random_map = r.random_map;
  base.io.distribution = r.distribution;
  base.io.dist_param = r.dist_param;
  base.io.dist_center = r.dist_center;
  base.io.read_percent = r.read_percent;
  if (absl::Status s = FillAffinity(r.cpus_allowed, &base); !s.ok()) return s;

  const size_t first_plan = plan.jobs.size();
  for (uint32_t i = 0; i < numjobs; ++i) {
    JobPlan job = base;
    job.index = first + i;
    job.named = named;
    // fio: each job's region starts at offset + job_index * offset_increment.
    uint64_t start = 0;
    if (MulOverflows(i, r.offset_increment, &start) ||
        __builtin_add_overflow(start, r.offset, &start) || start >= ctx.target_size) {
      return Invalid("offset/offset_increment",
                     absl::StrCat("job ", i, " would start at or beyond the end of ",
                                  ctx.target_path, " (", ctx.target_size, " bytes)"));
    }
    const uint64_t len = r.size ? r.size : ctx.target_size - start;
    if (len > ctx.target_size - start) {
      return Invalid("size", absl::StrCat("job ", i, " region [", start, ", +", len,
                                          ") extends past the end of ", ctx.target_path, " (",
                                          ctx.target_size, " bytes)"));
    }
    if (len < r.bs_max) {
      return Invalid("size", absl::StrCat("job ", i, " region of ", len,
                                          " bytes is smaller than bs=", r.bs_max));
    }
    if (r.direct && start % lbs != 0) {
      return Invalid(
          "offset", absl::StrCat("job ", i, " region start ", start,
                                 " is not aligned to the logical block size ", lbs, " (direct=1)"));
    }
    if (r.random && r.distribution == RandomDist::kZonedAbs) {
      uint64_t zoned = 0;
      for (const ZoneSplit& z : r.zones) zoned += z.size_bytes;
      if (zoned > len) {  // fio: "zoned_abs sizes exceed file size"
        return Invalid("random_distribution",
                       absl::StrCat("job ", i, ": the zoned_abs zones cover ", zoned,
                                    " bytes, more than its region of ", len, " bytes"));
      }
    }
    job.io.region_start = start;
    job.io.region_len = len;
    job.io.seed = r.randseed + first + i;
    // fio zipf_update, here in the parent: up to 10M pow() calls.
    if (r.random && r.distribution == RandomDist::kZipf) {
      const uint64_t n = r.variable_bs() ? (len - r.bs_max) / bs + 1 : len / bs;
      const JobPlan& first_job = plan.jobs[std::min(first_plan, plan.jobs.size() - 1)];
      job.io.zipf_zetan = i > 0 && len == first_job.io.region_len ? first_job.io.zipf_zetan
                                                                  : ZipfZeta(n, r.dist_param);
    }
    job.io_budget = r.time_based     ? std::numeric_limits<uint64_t>::max()
                    : r.io_size != 0 ? r.io_size
                                     : len;
    plan.jobs.push_back(job);
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<RunPlan> BuildRunPlan(const RunContext& ctx) {
  RunPlan plan;
  plan.path = ctx.target_path;
  if (plan.path.empty()) return absl::InvalidArgumentError("empty target_path");
  const std::vector<CellJob> jobs = CellJobs(ctx.cell);
  for (const CellJob& cj : jobs) {
    // fio's defaults, fixups and the engines' limits: common/resolved_job.h.
    absl::StatusOr<ResolvedJob> resolved = ResolveJobOrError(*cj.spec);
    if (!resolved.ok()) {
      if (cj.name.empty()) return resolved.status();
      return absl::InvalidArgumentError(
          absl::StrCat("job '", cj.name, "': ", resolved.status().message()));
    }
    plan.specs.push_back(*std::move(resolved));
    plan.names.push_back(cj.name);
  }
  plan.job = plan.specs[0];
  for (uint32_t n = 0; n < jobs.size(); ++n) {
    if (absl::Status s = PlanJob(ctx, plan.specs[n], n, jobs[n].first_thread, plan); !s.ok()) {
      return s;
    }
  }
  return plan;
}

}  // namespace blkbench
