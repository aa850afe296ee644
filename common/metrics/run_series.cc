// Per-run I/O families and series shared by the exporters; see run_series.h.
#include "common/metrics/run_series.h"

#include <limits>

#include "common/cell_label.h"
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
                .Register(registry)) {}

void RunIoSeries::Add(RunIoFamilies& families, const prometheus::Labels& labels) {
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
}

void RunIoSeries::RemoveGauges(RunIoFamilies& families) {
  if (iops_ == nullptr) return;  // already removed
  families.iops.Remove(iops_);
  families.bandwidth.Remove(bandwidth_);
  iops_ = nullptr;
  bandwidth_ = nullptr;
}

void RunIoSeries::RemoveAll(RunIoFamilies& families) {
  RemoveGauges(families);
  for (int d = 0; d < 2; ++d) {
    if (ios_[d] != nullptr) families.ios.Remove(ios_[d]);
    if (bytes_[d] != nullptr) families.bytes.Remove(bytes_[d]);
    ios_[d] = nullptr;
    bytes_[d] = nullptr;
  }
}

}  // namespace blkbench
