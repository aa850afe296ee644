// IoExecutor: the Runner for real block devices and files. Runs a JobSpec with fio's
// semantics on any registered I/O engine (io_uring, libaio, psync, sync, pvsync2, nop), jobs as
// threads or processes, and streams samples.
#ifndef BLKBENCH_AGENT_EXECUTOR_EXECUTOR_H_
#define BLKBENCH_AGENT_EXECUTOR_EXECUTOR_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <utility>

#include "agent/executor/engine_registry.h"
#include "agent/executor/io_trace.h"
#include "common/runner.h"

namespace blkbench {

struct ExecutorOptions {
  // Test seam: each job records its first `trace_ios_per_job` issued I/Os (in issue
  // order, ramp included) in shared memory, so it works for thread and process jobs
  // alike; Run() hands them to `on_trace` once per job after all jobs ended.
  uint32_t trace_ios_per_job = 0;
  std::function<void(uint32_t job, std::span<const IoTrace> ios)> on_trace;
  // The engines jobs can run on; null = EngineRegistry::Builtin(). Must outlive Run().
  const EngineRegistry* engines = nullptr;
  // Test seam: run every job on this registered engine instead of the spec's ioengine (the
  // spec is still resolved and checked as written).
  std::string engine_override;
};

// What a run does (fio semantics; see job_plan.h for defaults and validation):
//  - numjobs jobs, each with its own engine (engine_registry.h): an io_uring ring or an aio
//    context of iodepth entries, or one synchronous I/O at a time (psync, sync, pvsync2);
//    all run under one job loop (job_loop.cc). thread=true: std::threads; false (fio's
//    default): fork()ed processes. Each job opens the target itself: O_RDONLY or O_RDWR
//    (writes), O_DIRECT when direct; never O_CREAT, O_TRUNC or O_EXCL.
//  - Job i works in [offset + i*offset_increment, +size) (size 0: to the end of the
//    target). Random offsets: uniform bs-aligned blocks, with replacement (fio
//    norandommap), seeded by randseed + i. Sequential: from region start, wrapping.
//  - Stops at runtime when time_based; otherwise after io_size (default: the region)
//    bytes per job or at runtime, whichever comes first. Nothing is counted during
//    ramp_time (stats, samples, CPU, io_size and runtime all start after it).
//  - Latency = from the start of preparing an I/O's submit batch to the reap of its
//    completion batch (fio "lat"; one clock read per batch as in fio ios_completed).
//  - Samples every ctx.sample_interval after the ramp, plus a final partial one; their
//    counts and histogram buckets add up exactly to the result's.
//  - ctx.place_job, if set, is called for every job once all jobs are set up (target open,
//    ring and buffers ready) and before any of them issues I/O; an error aborts the run.
//  - On ctx.cancel (polled every 10 ms): jobs stop issuing and drain their in-flight
//    I/O; process jobs still running 250 ms later are SIGKILLed (thread jobs cannot be,
//    they always drain). Returns Cancelled; normally nothing of ours is in flight then.
// Thread-safe: concurrent Run() calls share nothing.
class IoExecutor final : public Runner {
 public:
  explicit IoExecutor(ExecutorOptions options = {}) : options_(std::move(options)) {}
  absl::StatusOr<v1::RunResult> Run(const RunContext& ctx) override;

 private:
  ExecutorOptions options_;
};

std::unique_ptr<Runner> NewIoExecutor(ExecutorOptions options = {});

}  // namespace blkbench

#endif  // BLKBENCH_AGENT_EXECUTOR_EXECUTOR_H_
