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
  uint32_t index = 0;
  const char* path = nullptr;  // RunPlan::path; set by the executor once the plan has settled
  const char* engine_name = "psync";  // for messages; the engine itself is the job's IoEngine
  bool open_for_write = false;        // O_RDWR only when the job writes, else O_RDONLY
  bool direct = false;
  IoGeneratorConfig io;
  // Bytes to issue in the measured phase before stopping (fio io_size, default the
  // region); UINT64_MAX for time_based jobs.
  uint64_t io_budget = 0;
  uint32_t iodepth = 1;
  uint32_t batch_submit = 1;  // fio iodepth_batch_submit after fixup (1..iodepth)
  uint32_t complete_min = 1;  // fio iodepth_batch_complete_min (0..iodepth)
  uint32_t complete_max = 1;  // fio iodepth_batch_complete_max after fixup (>= 1, >= min)
  bool hipri = false;
  bool fixedbufs = false;
  bool registerfiles = false;
  bool sqthread_poll = false;
  bool thread_mode = false;  // CPU time via RUSAGE_THREAD (thread) or RUSAGE_SELF (process)
  bool has_affinity = false;
  cpu_set_t cpus{};
  IoTrace* trace = nullptr;  // test seam: first trace_capacity issued I/Os, or null
  uint32_t trace_capacity = 0;
};

struct RunPlan {
  std::string path;
  std::vector<JobPlan> jobs;
  std::string engine = "psync";  // ioengine name: EngineRegistry key, RunResult.runner
  bool thread_mode = false;
  uint64_t ramp_ns = 0;
  uint64_t runtime_ns = 0;  // measured-phase limit; 0 = none (stop on io_budget)
};

// Plans ctx.cell.job for ctx.target_path / target_size: the job as ResolveJob resolves
// it (fio's defaults and fixups, the engines' limits; every problem it finds is an
// error here too), placed on the target. InvalidArgument names the option for anything
// the executor cannot run: a ResolveJob problem, a region outside the target, bs or
// offset not aligned to the target's logical block size with direct I/O, a bad cpu list.
absl::StatusOr<RunPlan> BuildRunPlan(const RunContext& ctx);

}  // namespace blkbench

#endif  // BLKBENCH_AGENT_EXECUTOR_JOB_PLAN_H_
