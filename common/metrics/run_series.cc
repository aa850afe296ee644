// Per-run I/O families and series shared by the exporters; see run_series.h.
#include "common/metrics/run_series.h"

#include <limits>

#include "common/cell_label.h"
#include "common/disk_interval.h"
#include "common/metrics/run_labels.h"

namespace blkbench {
namespace {

constexpr const char* kDirections[] = {"read", "write"};
constexpr double kNsPerSecond = 1e9;

}  // namespace

prometheus::Labels With(prometheus::Labels labels, const std::string& key,
                        const std::string& value) {
  labels[key] = value;
  return labels;
}

prometheus::Labels RunLabels(uint64_t experiment_id, uint64_t run_id, const v1::CellSpec& cell,
                             const std::string& host, const std::string& device,
                             const std::string& host_kernel) {
  const KernelLabels k = KernelOf(cell, host_kernel);
  prometheus::Labels labels = {{"experiment", std::to_string(experiment_id)},
                               {"cell", CellLabel(cell)},
                               {"run", std::to_string(run_id)},
                               {"host", host},
                               {"device", device},
                               {"device_class", cell.target().device_class()},
                               {"scheduler", SchedulerOf(cell)},
                               {"kernel", k.kernel}};
  if (!k.profile.empty()) {
    labels["profile"] = k.profile;
    labels["patches"] = k.patches;
  }
  return labels;
}

std::vector<double> IntervalPercentiles(const absl::StatusOr<LatencyHistogram>& interval) {
  const bool any = interval.ok() && interval->count() > 0;
  std::vector<double> values;
  for (const ReportedPercentile& p : kReportedPercentiles) {
    values.push_back(any ? static_cast<double>(interval->Percentile(p.percentile)) / kNsPerSecond
                         : std::numeric_limits<double>::quiet_NaN());
  }
  return values;
}

RunIoFamilies::RunIoFamilies(prometheus::Registry& registry, const std::string& prefix,
                             const std::string& iops_help)
    : iops(prometheus::BuildGauge().Name(prefix + "run_iops").Help(iops_help).Register(registry)),
      bandwidth(prometheus::BuildGauge()
                    .Name(prefix + "run_bandwidth_bytes_per_second")
                    .Help("Bytes per second (read + write) of a running run over its last "
                          "sample interval")
                    .Register(registry)),
      ios(prometheus::BuildCounter()
              .Name(prefix + "run_io_total")
              .Help("I/O operations completed by a run's current attempt, by direction")
              .Register(registry)),
      bytes(prometheus::BuildCounter()
                .Name(prefix + "run_io_bytes_total")
                .Help("Bytes transferred by a run's current attempt, by direction")
                .Register(registry)),
      device_util(prometheus::BuildGauge()
                      .Name(prefix + "run_device_utilization_ratio")
                      .Help("Share of a running run's last sample interval in which its device "
                            "had I/O in flight (iostat %util / 100, from /proc/diskstats)")
                      .Register(registry)),
      device_queue(prometheus::BuildGauge()
                       .Name(prefix + "run_device_queue_size")
                       .Help("Average requests in flight at a running run's device over its "
                             "last sample interval (iostat aqu-sz)")
                       .Register(registry)),
      device_in_flight(prometheus::BuildGauge()
                           .Name(prefix + "run_device_in_flight")
                           .Help("Requests in flight at a running run's device at the end of "
                                 "its last sample interval")
                           .Register(registry)),
      device_await(prometheus::BuildGauge()
                       .Name(prefix + "run_device_await_seconds")
                       .Help("Mean time a request completed by a running run's device spent "
                             "in flight over its last sample interval (iostat r_await, "
                             "w_await), by direction")
                       .Register(registry)),
      device_merges(prometheus::BuildCounter()
                        .Name(prefix + "run_device_merges_total")
                        .Help("Requests the block layer merged into others on a run's device "
                              "during its current attempt (iostat rrqm, wrqm), by direction")
                        .Register(registry)) {}

void RunIoSeries::Add(RunIoFamilies& families, const prometheus::Labels& labels) {
  families_ = &families;
  labels_ = labels;
  iops_ = &families.iops.Add(labels);
  bandwidth_ = &families.bandwidth.Add(labels);
  for (int d = 0; d < 2; ++d) {
    ios_[d] = &families.ios.Add(With(labels, "direction", kDirections[d]));
    bytes_[d] = &families.bytes.Add(With(labels, "direction", kDirections[d]));
  }
}

void RunIoSeries::Record(const v1::Sample& sample) {
  const v1::IoCounters& io = sample.io();
  ios_[0]->Increment(static_cast<double>(io.read_ios()));
  ios_[1]->Increment(static_cast<double>(io.write_ios()));
  bytes_[0]->Increment(static_cast<double>(io.read_bytes()));
  bytes_[1]->Increment(static_cast<double>(io.write_bytes()));
  if (sample.interval_ns() > 0) {
    const double seconds = static_cast<double>(sample.interval_ns()) / kNsPerSecond;
    iops_->Set(static_cast<double>(io.read_ios() + io.write_ios()) / seconds);
    bandwidth_->Set(static_cast<double>(io.read_bytes() + io.write_bytes()) / seconds);
  }
  if (!sample.has_device()) return;
  if (util_ == nullptr) AddDevice();
  const v1::DiskStatsInterval& d = sample.device();
  const DiskIntervalStats st =
      IntervalStats(d, static_cast<double>(sample.interval_ns()) / kNsPerSecond);
  util_->Set(st.util_pct / 100.0);
  queue_->Set(st.aqu_sz);
  in_flight_->Set(static_cast<double>(d.in_flight()));
  await_[0]->Set(st.r_await_ms / 1e3);
  await_[1]->Set(st.w_await_ms / 1e3);
  merges_[0]->Increment(static_cast<double>(d.reads_merged()));
  merges_[1]->Increment(static_cast<double>(d.writes_merged()));
}

void RunIoSeries::AddDevice() {
  util_ = &families_->device_util.Add(labels_);
  queue_ = &families_->device_queue.Add(labels_);
  in_flight_ = &families_->device_in_flight.Add(labels_);
  for (int d = 0; d < 2; ++d) {
    await_[d] = &families_->device_await.Add(With(labels_, "direction", kDirections[d]));
    merges_[d] = &families_->device_merges.Add(With(labels_, "direction", kDirections[d]));
  }
}

void RunIoSeries::RemoveGauges(RunIoFamilies& families) {
  if (iops_ == nullptr) return;  // already removed
  families.iops.Remove(iops_);
  families.bandwidth.Remove(bandwidth_);
  iops_ = nullptr;
  bandwidth_ = nullptr;
  if (util_ == nullptr) return;  // no device series
  families.device_util.Remove(util_);
  families.device_queue.Remove(queue_);
  families.device_in_flight.Remove(in_flight_);
  for (auto* await : await_) families.device_await.Remove(await);
  util_ = queue_ = in_flight_ = nullptr;
  await_[0] = await_[1] = nullptr;
}

void RunIoSeries::RemoveAll(RunIoFamilies& families) {
  RemoveGauges(families);
  for (int d = 0; d < 2; ++d) {
    if (ios_[d] != nullptr) families.ios.Remove(ios_[d]);
    if (bytes_[d] != nullptr) families.bytes.Remove(bytes_[d]);
    ios_[d] = nullptr;
    bytes_[d] = nullptr;
    if (merges_[d] != nullptr) families.device_merges.Remove(merges_[d]);
    merges_[d] = nullptr;
  }
}

}  // namespace blkbench
