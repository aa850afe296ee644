// fio's job rules in one place; see resolved_job.h.
#include "common/resolved_job.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/sim_vocabulary.h"

namespace blkbench {
namespace {

// Appends a problem about `keys` to `out`.
void Problem(std::vector<JobProblem>& out, std::vector<std::string_view> keys,
             std::string message) {
  out.push_back({std::move(keys), std::move(message)});
}

void CheckSectorAligned(const v1::JobSpec& spec, std::string_view key, uint64_t value,
                        std::vector<JobProblem>& out) {
  if (spec.direct() && value % kSectorSize != 0) {
    Problem(out, {key, "direct"},
            absl::StrCat("with direct=1, ", std::string(key), " must be a multiple of 512 (got ",
                         value, " bytes)"));
  }
}

}  // namespace

void ApplyFioFixups(v1::JobSpec& spec) {
  const uint32_t depth = spec.iodepth() ? spec.iodepth() : 1;
  if (spec.iodepth_batch_submit() == 0) spec.set_iodepth_batch_submit(depth);
  if (spec.iodepth_batch_complete_max() == 0) {
    spec.set_iodepth_batch_complete_max(std::max<uint32_t>(1, spec.iodepth_batch_complete_min()));
  }
}

JobResolution ResolveJob(const v1::JobSpec& written) {
  v1::JobSpec spec = written;
  ApplyFioFixups(spec);
  JobResolution r;
  ResolvedJob& j = r.job;
  std::vector<JobProblem>& out = r.problems;

  switch (spec.rw()) {
    case v1::READ:
      break;
    case v1::WRITE:
      j.reads = false;
      j.writes = true;
      break;
    case v1::RANDREAD:
      j.random = true;
      break;
    case v1::RANDWRITE:
      j.random = j.writes = true;
      j.reads = false;
      break;
    case v1::RANDRW:
      j.random = j.writes = true;
      break;
    case v1::READWRITE:
      j.writes = true;
      break;
    default:
      Problem(out, {"rw"}, absl::StrCat("unsupported rw value ", static_cast<int>(spec.rw())));
  }
  if (spec.rwmixread() > 100) {
    Problem(out, {"rwmixread"}, absl::StrCat("rwmixread must be 0..100, got ", spec.rwmixread()));
  }
  j.read_percent = !j.writes ? 100 : !j.reads ? 0 : std::min<uint32_t>(spec.rwmixread(), 100);

  switch (spec.ioengine()) {
    case v1::IO_ENGINE_UNSPECIFIED:
    case v1::PSYNC:
      j.engine = IoEngineKind::kPsync;
      break;
    case v1::IO_URING:
      j.engine = IoEngineKind::kIoUring;
      break;
    default:
      Problem(out, {"ioengine"},
              absl::StrCat("unsupported ioengine value ", static_cast<int>(spec.ioengine())));
  }
  const bool uring = j.engine == IoEngineKind::kIoUring;

  j.bs = spec.bs() ? spec.bs() : kFioDefaultBs;
  if (j.bs % kSectorSize != 0) {
    Problem(out, {"bs"}, absl::StrCat("bs must be a multiple of 512 (got ", j.bs, " bytes)"));
  }
  j.numjobs = spec.numjobs() ? spec.numjobs() : 1;
  if (j.numjobs > kMaxNumjobs) {
    Problem(out, {"numjobs"},
            absl::StrCat("numjobs ", j.numjobs, " is above the limit of ", kMaxNumjobs));
  }
  const uint32_t asked_depth = spec.iodepth() ? spec.iodepth() : 1;
  if (asked_depth > kMaxIodepth) {
    Problem(out, {"iodepth"},
            absl::StrCat("iodepth ", asked_depth, " is above the limit of ", kMaxIodepth));
  } else if (uring && asked_depth > kMaxUringDepth) {
    Problem(out, {"iodepth", "ioengine"},
            absl::StrCat("iodepth ", asked_depth, " exceeds io_uring's maximum ring size of ",
                         kMaxUringDepth, " (the ring has iodepth entries)"));
  }
  // fio: the batch and completion settings are compared with the asked iodepth.
  if (spec.iodepth_batch_submit() > asked_depth) {
    Problem(out, {"iodepth_batch_submit", "iodepth"},
            absl::StrCat("iodepth_batch_submit (", spec.iodepth_batch_submit(),
                         ") is larger than iodepth (", asked_depth, ")"));
  }
  if (spec.iodepth_batch_complete_min() > spec.iodepth_batch_complete_max()) {
    Problem(out, {"iodepth_batch_complete_min", "iodepth_batch_complete_max"},
            absl::StrCat("iodepth_batch_complete_min (", spec.iodepth_batch_complete_min(),
                         ") is larger than iodepth_batch_complete_max (",
                         spec.iodepth_batch_complete_max(), ")"));
  }
  if (spec.iodepth_batch_complete_min() > asked_depth) {
    Problem(out, {"iodepth_batch_complete_min", "iodepth"},
            absl::StrCat("iodepth_batch_complete_min (", spec.iodepth_batch_complete_min(),
                         ") is larger than iodepth (", asked_depth, ")"));
  }
  // A synchronous engine has one I/O in flight whatever iodepth says (fio: "iodepth > 1
  // has no effect" for sync engines).
  j.iodepth = uring ? std::min(asked_depth, kMaxUringDepth) : 1;
  // After ApplyFioFixups; what a synchronous engine's depth of 1 leaves of them.
  j.batch_submit = std::clamp<uint32_t>(spec.iodepth_batch_submit(), 1, j.iodepth);
  j.complete_min = std::min(spec.iodepth_batch_complete_min(), j.iodepth);
  j.complete_max = std::clamp(std::max(spec.iodepth_batch_complete_max(), j.complete_min),
                              uint32_t{1}, j.iodepth);

  j.direct = spec.direct();
  j.hipri = spec.hipri();
  j.fixedbufs = spec.fixedbufs();
  j.registerfiles = spec.registerfiles();
  j.sqthread_poll = spec.sqthread_poll();
  if (!uring) {
    const std::pair<std::string_view, bool> uring_only[] = {{"hipri", j.hipri},
                                                            {"fixedbufs", j.fixedbufs},
                                                            {"registerfiles", j.registerfiles},
                                                            {"sqthread_poll", j.sqthread_poll}};
    for (const auto& [key, set] : uring_only) {
      if (set) {
        Problem(
            out, {key, "ioengine"},
            absl::StrCat(std::string(key), " is an io_uring option; it needs ioengine: io_uring"));
      }
    }
  }
  if (j.hipri && !j.direct) Problem(out, {"hipri", "direct"}, "hipri (polled I/O) needs direct=1");
  j.thread = spec.thread();

  j.time_based = spec.time_based();
  j.runtime_ns = spec.runtime_ns();
  j.ramp_ns = spec.ramp_time_ns();
  if (j.time_based && j.runtime_ns == 0) {
    Problem(out, {"runtime", "time_based"},
            "time_based=1 needs a runtime > 0 (otherwise the job never ends)");
  }
  j.size = spec.size();
  j.offset = spec.offset();
  j.offset_increment = spec.offset_increment();
  j.io_size = spec.io_size();
  CheckSectorAligned(spec, "size", j.size, out);
  CheckSectorAligned(spec, "offset", j.offset, out);
  CheckSectorAligned(spec, "offset_increment", j.offset_increment, out);
  const bool size_unaligned = spec.direct() && j.size % kSectorSize != 0;
  if (j.size != 0 && j.size < j.bs && !size_unaligned) {
    Problem(out, {"size", "bs"},
            absl::StrCat("size (", j.size, " bytes) is smaller than bs (", j.bs, " bytes)"));
  }
  j.cpus_allowed = spec.cpus_allowed();
  j.randseed = spec.randseed();
  return r;
}

absl::StatusOr<ResolvedJob> ResolveJobOrError(const v1::JobSpec& spec) {
  JobResolution r = ResolveJob(spec);
  if (r.problems.empty()) return std::move(r.job);
  std::vector<std::string> lines;
  for (const JobProblem& p : r.problems) {
    lines.push_back(absl::StrCat("job option ", std::string(p.keys.front()), ": ", p.message));
  }
  return absl::InvalidArgumentError(absl::StrJoin(lines, "; "));
}

bool IsSimulated(std::string_view device_class_or_kernel) {
  return device_class_or_kernel.substr(0, kSimPrefix.size()) == kSimPrefix;
}

v1::CellSpec CellForRepeat(const v1::CellSpec& cell, uint32_t repeat) {
  v1::CellSpec out = cell;
  out.mutable_job()->set_randseed(cell.job().randseed() + repeat);
  return out;
}

}  // namespace blkbench
