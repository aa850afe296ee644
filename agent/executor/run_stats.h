// Reads the jobs' cumulative shared stats into interval Samples (while the run goes
// on) and into the final RunResult (after every job ended). fio's stat.c
// add_*_sample / __show_run_stats in spirit, not in shape.
#ifndef BLKBENCH_AGENT_EXECUTOR_RUN_STATS_H_
#define BLKBENCH_AGENT_EXECUTOR_RUN_STATS_H_

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "agent/executor/shared_state.h"
#include "blkbench/v1/metrics.pb.h"
#include "common/histogram.h"

namespace blkbench {

// Cumulative counters of all jobs at one instant (latency of reads and writes merged).
struct Totals {
  uint64_t ios[2] = {0, 0};
  uint64_t bytes[2] = {0, 0};
  uint64_t sum_ns = 0;
  uint64_t min_ns = UINT64_MAX;
  uint64_t max_ns = 0;
  std::array<uint64_t, LatencyHistogram::kBuckets> buckets{};
};

// A snapshot while jobs are running. Each job's words are read one by one, so an I/O
// whose bucket is already visible may not be in the scalar counters yet (or the other
// way round); differences of snapshots still add up exactly to the final totals.
void ReadTotals(const SharedArea& area, Totals* out);

// The latency histogram of the interval between two snapshots: bucket counts are exact
// differences; count is their sum; min/max are the bounds of the first/last non-empty
// bucket, or the exact new running min/max when it was set in this interval; sum is
// the difference of the running sums clamped to what those buckets allow. The result
// always passes LatencyHistogram::FromProto.
void IntervalHistogram(const Totals& prev, const Totals& cur, v1::Histogram* out);

// Sets the run's duration and the IOPS and bandwidth that follow from it and r.io().
void SetDuration(v1::RunResult& r, uint64_t duration_ns);

// One named job's threads in the SharedArea: `threads` slots from `first`.
struct JobSlice {
  std::string name;
  uint32_t first = 0;
  uint32_t threads = 0;
};

// The cumulative counters of one direction (kRead, kWrite) of the threads of `slice`:
// ios/bytes of that direction only, and its latency words.
void ReadSliceTotals(const SharedArea& area, const JobSlice& slice, int dir, Totals* out);

// Emits seq-numbered samples from successive snapshots, each with its interval per job
// (Sample.jobs, one per slice).
class Sampler {
 public:
  // `slices` are the cell's jobs (one slice over every thread for a one-job cell).
  Sampler(const SharedArea& area, std::vector<JobSlice> slices,
          std::function<void(const v1::Sample&)> on_sample, uint64_t measure_start_ns);
  // A sample ending at now_ns (CLOCK_MONOTONIC), or at the end of the last job if all
  // jobs had already ended.
  void Emit(uint64_t now_ns);
  // The last sample, after all jobs ended, ending at measure start + duration_ns; skipped
  // when it would be empty and zero-length.
  void EmitFinal(uint64_t duration_ns);
  uint64_t samples() const { return seq_; }
  // Where the last sample ended (ns after measure start).
  uint64_t offset_ns() const { return prev_offset_ns_; }

 private:
  void EmitAt(uint64_t offset_ns);
  void ReadAll();
  const SharedArea& area_;
  std::vector<JobSlice> slices_;
  std::function<void(const v1::Sample&)> on_sample_;
  uint64_t measure_start_ns_;
  uint64_t prev_offset_ns_ = 0;
  uint64_t seq_ = 0;
  Totals prev_, cur_;
  // Per slice and direction: [2 * slice + dir].
  std::vector<Totals> prev_jobs_, cur_jobs_;
};

// The final result from the stats of jobs that all ended: counters, exact per-direction
// histograms merged over jobs, summary, CPU, duration (longest job's measured phase),
// iops, bandwidth, `runner`, and executor internals ("executor.*").
absl::StatusOr<v1::RunResult> BuildResult(const SharedArea& area, uint64_t measure_start_ns,
                                          const std::string& runner);

// Adds RunResult.jobs to `r` (a BuildResult of the same area): per slice, its threads'
// counters and exact histograms merged, iops and bandwidth over r's duration (so the
// jobs' rates add up to the run's). InternalError for stats that do not merge.
absl::Status AddJobResults(const SharedArea& area, const std::vector<JobSlice>& slices,
                           v1::RunResult& r);

}  // namespace blkbench

#endif  // BLKBENCH_AGENT_EXECUTOR_RUN_STATS_H_
