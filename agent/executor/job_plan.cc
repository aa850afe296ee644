// JobSpec → per-job plans: fio's defaults and fixups, region math, validation.
#include "agent/executor/job_plan.h"

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <limits>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "agent/executor/cpu_list.h"

namespace blkbench {
namespace {

constexpr uint64_t kDefaultBs = 4096;  // fio bs default

absl::Status Invalid(const std::string& option, const std::string& why) {
  return absl::InvalidArgumentError(absl::StrCat("job option ", option, ": ", why));
}

struct RwInfo {
  bool random;
  bool reads;
  bool writes;
};

absl::StatusOr<RwInfo> ParseRw(v1::RwMode rw) {
  switch (rw) {
    case v1::READ:
      return RwInfo{false, true, false};
    case v1::WRITE:
      return RwInfo{false, false, true};
    case v1::RANDREAD:
      return RwInfo{true, true, false};
    case v1::RANDWRITE:
      return RwInfo{true, false, true};
    case v1::RANDRW:
      return RwInfo{true, true, true};
    case v1::READWRITE:
      return RwInfo{false, true, true};
    default:
      return Invalid("rw", absl::StrCat("unsupported value ", static_cast<int>(rw)));
  }
}

bool MulOverflows(uint64_t a, uint64_t b, uint64_t* out) {
  return __builtin_mul_overflow(a, b, out);
}

// io_uring-only options must not silently do nothing with psync (fio rejects engine
// options the engine does not define).
absl::Status CheckEngineOptions(const v1::JobSpec& j, Engine engine) {
  if (engine == Engine::kIoUring) return absl::OkStatus();
  if (j.hipri()) return Invalid("hipri", "needs ioengine=io_uring");
  if (j.fixedbufs()) return Invalid("fixedbufs", "needs ioengine=io_uring");
  if (j.registerfiles()) return Invalid("registerfiles", "needs ioengine=io_uring");
  if (j.sqthread_poll()) return Invalid("sqthread_poll", "needs ioengine=io_uring");
  return absl::OkStatus();
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

}  // namespace

absl::StatusOr<RunPlan> BuildRunPlan(const RunContext& ctx) {
  const v1::JobSpec& j = ctx.cell.job();
  absl::StatusOr<RwInfo> rw = ParseRw(j.rw());
  if (!rw.ok()) return rw.status();

  RunPlan plan;
  plan.path = ctx.target_path;
  if (plan.path.empty()) return absl::InvalidArgumentError("empty target_path");
  plan.engine = j.ioengine() == v1::IO_URING ? Engine::kIoUring : Engine::kPsync;
  if (j.ioengine() != v1::IO_URING && j.ioengine() != v1::PSYNC &&
      j.ioengine() != v1::IO_ENGINE_UNSPECIFIED) {
    return Invalid("ioengine", absl::StrCat("unsupported value ", static_cast<int>(j.ioengine())));
  }
  if (absl::Status s = CheckEngineOptions(j, plan.engine); !s.ok()) return s;
  plan.thread_mode = j.thread();
  plan.ramp_ns = j.ramp_time_ns();
  plan.runtime_ns = j.runtime_ns();
  if (j.time_based() && j.runtime_ns() == 0) return Invalid("time_based", "needs a runtime");

  const uint64_t bs = j.bs() ? j.bs() : kDefaultBs;
  const uint32_t lbs = std::max<uint32_t>(ctx.logical_block_size, 1);
  if (j.direct() && bs % lbs != 0) {
    return Invalid("bs", absl::StrCat(bs, " is not a multiple of the logical block size ", lbs,
                                      " (direct=1)"));
  }
  if (j.rwmixread() > 100) return Invalid("rwmixread", "must be 0..100");
  if (j.hipri() && !j.direct()) return Invalid("hipri", "polled I/O needs direct=1");

  const uint32_t numjobs = j.numjobs() ? j.numjobs() : 1;
  const uint32_t depth = plan.engine == Engine::kPsync ? 1 : (j.iodepth() ? j.iodepth() : 1);
  if (depth > kMaxUringDepth) {
    return Invalid("iodepth", absl::StrCat(depth, " exceeds io_uring's maximum ring size of ",
                                           kMaxUringDepth));
  }

  JobPlan base;
  base.engine = plan.engine;
  base.open_for_write = rw->writes;
  base.direct = j.direct();
  base.io.block_size = bs;
  base.io.random = rw->random;
  base.io.read_percent = !rw->writes ? 100 : !rw->reads ? 0 : j.rwmixread();
  base.iodepth = depth;
  // fio fixup_options: batch 0 or > iodepth means iodepth; max < min means min.
  base.batch_submit =
      j.iodepth_batch_submit() == 0 ? depth : std::min(j.iodepth_batch_submit(), depth);
  base.complete_min = std::min(j.iodepth_batch_complete_min(), depth);
  base.complete_max =
      std::clamp(std::max(j.iodepth_batch_complete_max(), base.complete_min), uint32_t{1}, depth);
  base.hipri = j.hipri();
  base.fixedbufs = j.fixedbufs();
  base.registerfiles = j.registerfiles();
  base.sqthread_poll = j.sqthread_poll();
  base.thread_mode = j.thread();
  if (absl::Status s = FillAffinity(j.cpus_allowed(), &base); !s.ok()) return s;

  for (uint32_t i = 0; i < numjobs; ++i) {
    JobPlan job = base;
    job.index = i;
    // fio: each job's region starts at offset + job_index * offset_increment.
    uint64_t start = 0;
    if (MulOverflows(i, j.offset_increment(), &start) ||
        __builtin_add_overflow(start, j.offset(), &start) || start >= ctx.target_size) {
      return Invalid("offset/offset_increment",
                     absl::StrCat("job ", i, " would start at or beyond the end of ",
                                  ctx.target_path, " (", ctx.target_size, " bytes)"));
    }
    const uint64_t len = j.size() ? j.size() : ctx.target_size - start;
    if (len > ctx.target_size - start) {
      return Invalid("size", absl::StrCat("job ", i, " region [", start, ", +", len,
                                          ") extends past the end of ", ctx.target_path, " (",
                                          ctx.target_size, " bytes)"));
    }
    if (len < bs) {
      return Invalid("size",
                     absl::StrCat("job ", i, " region of ", len, " bytes is smaller than bs=", bs));
    }
    if (j.direct() && start % lbs != 0) {
      return Invalid(
          "offset", absl::StrCat("job ", i, " region start ", start,
                                 " is not aligned to the logical block size ", lbs, " (direct=1)"));
    }
    job.io.region_start = start;
    job.io.region_len = len;
    job.io.seed = j.randseed() + i;
    job.io_budget = j.time_based()     ? std::numeric_limits<uint64_t>::max()
                    : j.io_size() != 0 ? j.io_size()
                                       : len;
    plan.jobs.push_back(job);
  }
  return plan;
}

}  // namespace blkbench
