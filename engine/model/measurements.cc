// Measurements: time-weighted in-flight averages (areas under the count), latency
// histograms and per-stage CPU time, relative to the ramp end.
#include "engine/model/measurements.h"

#include <algorithm>

namespace blkbench::engine {

void Measurements::Reset() {
  q_.counters = EngineCounters{};
  q_.interval_counters = EngineCounters{};
  lat_.Clear();
  read_lat_.Clear();
  write_lat_.Clear();
  interval_lat_.Clear();
  inflight_area_ = 0;
  inflight_since_ = q_.sim.now();
  group_ios_.assign(q_.config.cgroups.weights.size() + 1, 0);
  job_totals_.assign(std::max<size_t>(q_.config.jobs.size(), 1), JobTotals{});
  job_interval_.assign(job_totals_.size(), JobTotals{});
  dev_inflight_area_ = 0;
  dev_inflight_since_ = q_.sim.now();
  measure_from_ = q_.sim.now();
  cpu_stage_base_.assign(kStageCount, 0);
  for (int s = 0; s < kStageCount; ++s) {
    cpu_stage_base_[s] = q_.cpus.TotalNs(static_cast<Stage>(s));
  }
}

void Measurements::UpdateInflight(int delta) {
  const SimTime now = q_.sim.now();
  if (q_.measuring)
    inflight_area_ += static_cast<double>(inflight_) * static_cast<double>(now - inflight_since_);
  inflight_since_ = now;
  inflight_ += delta;
}

void Measurements::UpdateDeviceInflight(int delta) {
  const SimTime now = q_.sim.now();
  if (q_.measuring) {
    dev_inflight_area_ +=
        static_cast<double>(dev_inflight_) * static_cast<double>(now - dev_inflight_since_);
  }
  dev_inflight_since_ = now;
  dev_inflight_ += delta;
}

void Measurements::RecordCqe(const IoSlot& io, uint32_t group, uint32_t job) {
  if (!q_.measuring) return;
  const SimTime now = q_.sim.now();
  const uint64_t lat = now - io.start;
  // Seven histograms take the latency: its bucket is computed once.
  const uint32_t bucket = LatencyHistogram::BucketIndex(lat);
  JobTotals& total = job_totals_[job];
  JobTotals& interval = job_interval_[job];
  lat_.AddAt(bucket, lat);
  interval_lat_.AddAt(bucket, lat);
  (io.write ? write_lat_ : read_lat_).AddAt(bucket, lat);
  total.lat.AddAt(bucket, lat);
  (io.write ? total.write_lat : total.read_lat).AddAt(bucket, lat);
  interval.lat.AddAt(bucket, lat);
  (io.write ? interval.write_lat : interval.read_lat).AddAt(bucket, lat);
  for (EngineCounters* c : {&q_.counters, &q_.interval_counters}) {
    if (io.write) {
      ++c->write_ios;
      c->write_bytes += io.bytes;
    } else {
      ++c->read_ios;
      c->read_bytes += io.bytes;
    }
  }
  last_cqe_ = now;
  ++group_ios_[group];
  for (JobTotals* t : {&total, &interval}) {
    ++(io.write ? t->write_ios : t->read_ios);
    (io.write ? t->write_bytes : t->read_bytes) += io.bytes;
  }
}

double Measurements::MeanInflight() const {
  const SimTime now = q_.sim.now();
  if (now <= measure_from_) return 0;
  const double area =
      inflight_area_ + static_cast<double>(inflight_) * static_cast<double>(now - inflight_since_);
  return area / static_cast<double>(now - measure_from_);
}

double Measurements::MeanDeviceInflight() const {
  const SimTime now = q_.sim.now();
  if (now <= measure_from_) return 0;
  const double area = dev_inflight_area_ + static_cast<double>(dev_inflight_) *
                                               static_cast<double>(now - dev_inflight_since_);
  return area / static_cast<double>(now - measure_from_);
}

SimTime Measurements::CpuStageNs(Stage stage) const {
  return q_.cpus.TotalNs(stage) - cpu_stage_base_[static_cast<int>(stage)];
}

SimTime Measurements::CpuBusyNs() const {
  SimTime total = 0;
  for (int s = 0; s < kStageCount; ++s) total += CpuStageNs(static_cast<Stage>(s));
  return total;
}

void Measurements::TakeInterval(LatencyHistogram* lat, EngineCounters* counters,
                                std::vector<JobTotals>* jobs) {
  *lat = interval_lat_;
  *counters = q_.interval_counters;
  *jobs = job_interval_;
  interval_lat_.Clear();
  q_.interval_counters = EngineCounters{};
  job_interval_.assign(job_totals_.size(), JobTotals{});
}

}  // namespace blkbench::engine
