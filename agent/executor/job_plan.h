// Validated, fully resolved per-job parameters derived from a RunContext: what each fio
// job does (fio fixup_options + the region math of fio's offset/offset_increment/size).
#ifndef BLKBENCH_AGENT_EXECUTOR_JOB_PLAN_H_
#define BLKBENCH_AGENT_EXECUTOR_JOB_PLAN_H_

#include <sched.h>

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "agent/executor/io_trace.h"
#include "agent/executor/offsets.h"
#include "common/resolved_job.h"
#include "common/runner.h"

namespace blkbench {

// Plain data only: a job reads its plan after fork() in a child process, where nothing
// may allocate or take locks a parent thread might have held.
struct JobPlan {
  uint32_t index = 0;  // the thread's index in the cell (common/cell_jobs.h order)
  uint32_t named = 0;  // its job: an index into RunPlan::specs
  // Set by the executor once the plan has settled (they point into the RunPlan):
  const char* path = nullptr;         // RunPlan::path
  const ResolvedJob* job = nullptr;   // RunPlan::specs[named]: iodepth, batching, direct, ...
  const char* engine_name = "psync";  // for messages; the engine itself is the job's IoEngine
  IoGeneratorConfig io;
  // Bytes to issue in the measured phase before stopping (fio io_size, default the
  // region); UINT64_MAX for time_based jobs.
  uint64_t io_budget = 0;
  bool has_affinity = false;
  cpu_set_t cpus{};
  IoTrace* trace = nullptr;  // test seam: first trace_capacity issued I/Os, or null
  uint32_t trace_capacity = 0;
};

struct RunPlan {
  std::string path;
  // The cell's jobs as ResolveJob resolved them, once for all numjobs of each: the named
  // jobs in order, or the cell's one job. Each has its ioengine (the EngineRegistry key),
  // iodepth, bs, ...
  std::vector<ResolvedJob> specs;
  std::vector<std::string> names;  // per spec: the named job, "" for a one-job cell
  // specs[0]: what the run shares (the parser makes named jobs agree on ramp, runtime and
  // startdelay): thread, ramp and runtime (0 = stop on io_budget), RunResult.runner.
  ResolvedJob job;
  std::vector<JobPlan> jobs;  // per thread: its job, region, budget, seed and CPUs
};

// Plans every job of ctx.cell (common/cell_jobs.h) for ctx.target_path / target_size, each
// thread of a job as fio plans its numjobs, seeds by the thread's index in the cell. Each
// job is checked as ResolveJob resolves
// it (fio's defaults and fixups, the engines' limits; every problem it finds is an
// error here too), placed on the target. InvalidArgument names the option for anything
// the executor cannot run: a ResolveJob problem, a region outside the target, bs or
// offset not aligned to the target's logical block size with direct I/O, a bad cpu list.
absl::StatusOr<RunPlan> BuildRunPlan(const RunContext& ctx);

}  // namespace blkbench

#endif  // BLKBENCH_AGENT_EXECUTOR_JOB_PLAN_H_
