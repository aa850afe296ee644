// Measurements: what a run reports besides the counters — latency histograms (all,
// read, write, per interval), the time-averaged I/Os in flight and at the device, I/Os
// per cgroup and CPU time per stage, all since the ramp end.
#ifndef BLKBENCH_ENGINE_MODEL_MEASUREMENTS_H_
#define BLKBENCH_ENGINE_MODEL_MEASUREMENTS_H_

#include <vector>

#include "common/histogram.h"
#include "engine/model/blk_mq.h"

namespace blkbench::engine {

// One job's share (EngineConfig::jobs): what RunResult.jobs reports.
struct JobTotals {
  LatencyHistogram lat, read_lat, write_lat;
  uint64_t read_ios = 0, write_ios = 0, read_bytes = 0, write_bytes = 0;
};

class Measurements {
 public:
  explicit Measurements(BlkMq& q) : q_(q) {}

  // Starts measuring from now: clears everything, including BlkMq's counters.
  void Reset();
  // I/Os between submission and CQE (+1 at submission, -1 at the CQE).
  void UpdateInflight(int delta);
  // Requests at the device (+1 at queue_rq, -1 at completion).
  void UpdateDeviceInflight(int delta);
  // A CQE of `io` from a task of job `job` in cgroup `group` (only while measuring).
  void RecordCqe(const IoSlot& io, uint32_t group, uint32_t job);

  double MeanInflight() const;
  double MeanDeviceInflight() const;
  SimTime CpuStageNs(Stage stage) const;
  SimTime CpuBusyNs() const;
  SimTime last_cqe() const { return last_cqe_; }
  const LatencyHistogram& lat() const { return lat_; }
  const LatencyHistogram& read_lat() const { return read_lat_; }
  const LatencyHistogram& write_lat() const { return write_lat_; }
  const std::vector<uint64_t>& group_ios() const { return group_ios_; }
  const std::vector<JobTotals>& job_totals() const { return job_totals_; }
  // The histogram and counters since the previous call, in total and per job (one
  // JobTotals per EngineConfig::jobs entry).
  void TakeInterval(LatencyHistogram* lat, EngineCounters* counters, std::vector<JobTotals>* jobs);

 private:
  BlkMq& q_;
  LatencyHistogram lat_, read_lat_, write_lat_, interval_lat_;
  int inflight_ = 0;
  SimTime inflight_since_ = 0;
  double inflight_area_ = 0;
  int dev_inflight_ = 0;
  SimTime dev_inflight_since_ = 0;
  double dev_inflight_area_ = 0;
  std::vector<uint64_t> group_ios_;
  std::vector<JobTotals> job_totals_, job_interval_;
  SimTime measure_from_ = 0;
  SimTime last_cqe_ = 0;
  std::vector<SimTime> cpu_stage_base_;
};

}  // namespace blkbench::engine

#endif  // BLKBENCH_ENGINE_MODEL_MEASUREMENTS_H_
