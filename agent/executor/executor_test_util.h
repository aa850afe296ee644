// Shared helpers for the IoExecutor integration tests: a JobSpec builder, one Run() with
// samples and traces collected, and the samples-add-up-to-the-result check.
#ifndef BLKBENCH_AGENT_EXECUTOR_EXECUTOR_TEST_UTIL_H_
#define BLKBENCH_AGENT_EXECUTOR_EXECUTOR_TEST_UTIL_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "agent/executor/executor.h"
#include "gtest/gtest.h"

namespace blkbench::exec_test {

inline constexpr uint64_t kMiB = 1 << 20;
inline constexpr uint64_t kMs = 1'000'000;

// 4k blocks, iodepth 8, one job, fio's default batching, seed 0x89.
v1::JobSpec Job(v1::RwMode rw, v1::IoEngine engine, bool thread);

struct Outcome {
  absl::StatusOr<v1::RunResult> result;
  std::vector<v1::Sample> samples;
  std::map<uint32_t, std::vector<IoTrace>> traces;
  std::chrono::nanoseconds wall{0};
};

// Runs `spec` on `path`; with cancel_on_first_sample, sets *cancel from the first sample.
Outcome Execute(const std::string& path, uint64_t size, const v1::JobSpec& spec,
                uint32_t trace_per_job = 0,
                std::chrono::nanoseconds interval = std::chrono::seconds(1),
                std::atomic<bool>* cancel = nullptr, bool cancel_on_first_sample = false);

// Samples are numbered 1..n, tile the measured time and add up to the result exactly
// (counts, buckets) or within bucket accuracy (latency sum).
void ExpectSamplesAddUp(const Outcome& run);

// RunResult.internals[key], or -1 when missing.
double Internal(const v1::RunResult& r, const char* key);

std::string ModeName(const ::testing::TestParamInfo<bool>& p);

// Every built-in engine (common/resolved_job.h's vocabulary), the ones that move data
// (all but nop, kEngineNoIo), the asynchronous ones (iodepth > 1) and the synchronous ones
// (kEngineSync), for engine-agnostic tests.
std::vector<v1::IoEngine> AllEngines();
std::vector<v1::IoEngine> DataEngines();
std::vector<v1::IoEngine> AsyncEngines();
std::vector<v1::IoEngine> SyncEngines();
// The ioengine= name (RunResult.runner) and whether it runs one I/O at a time.
std::string EngineName(v1::IoEngine e);
bool IsSyncEngine(v1::IoEngine e);

// Runs `body` once per engine of `engines` with Job(rw, engine, thread), under a
// SCOPED_TRACE naming the engine: a failed ASSERT ends that engine's turn only.
void ForEachEngine(const std::vector<v1::IoEngine>& engines, v1::RwMode rw, bool thread,
                   absl::FunctionRef<void(v1::IoEngine, v1::JobSpec)> body);

// `spec` made time_based with a minute's runtime, run on `path` and cancelled from its
// first sample (20 ms): the run ends Cancelled within 3 s with that one sample.
void ExpectCancelStopsPromptly(const std::string& path, uint64_t size, v1::JobSpec spec);

}  // namespace blkbench::exec_test

#endif  // BLKBENCH_AGENT_EXECUTOR_EXECUTOR_TEST_UTIL_H_
