// The live per-run series both Prometheus exporters keep (the controller's from what
// agents stream, the agent's from its own runs): metric families of a running run's I/O,
// one attempt's series in them, its labels, and its interval latency percentiles.
#ifndef BLKBENCH_COMMON_METRICS_RUN_SERIES_H_
#define BLKBENCH_COMMON_METRICS_RUN_SERIES_H_

#include <cstdint>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "blkbench/v1/metrics.pb.h"
#include "blkbench/v1/workload.pb.h"
#include "common/histogram.h"
#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/gauge.h"
#include "prometheus/labels.h"
#include "prometheus/registry.h"

namespace blkbench {

// The percentiles users compare kernels on (DESIGN.md: p50/p99/p99.9): the
// LatencyHistogram::Percentile argument, the summary quantile and the label value.
struct ReportedPercentile {
  double percentile;
  double quantile;
  const char* label;
};
inline constexpr ReportedPercentile kReportedPercentiles[] = {
    {50.0, 0.5, "50"}, {99.0, 0.99, "99"}, {99.9, 0.999, "99.9"}};

// `labels` plus key="value".
prometheus::Labels With(prometheus::Labels labels, const std::string& key,
                        const std::string& value);

// The labels describing a run wherever it is exported: experiment, cell, run, host,
// device, device_class, scheduler and kernel (see KernelOf: `host_kernel` is the release
// of the host it runs on, "" when unknown), plus profile and patches for engine runs.
prometheus::Labels RunLabels(uint64_t experiment_id, uint64_t run_id, const v1::CellSpec& cell,
                             const std::string& host, const std::string& device,
                             const std::string& host_kernel);

// Per kReportedPercentiles, the latency percentile in seconds of a sample interval's
// histogram; NaN each when the interval completed no I/O or the histogram is malformed.
std::vector<double> IntervalPercentiles(const absl::StatusOr<LatencyHistogram>& interval);

// The families of a running run's I/O, registered in `registry` as <prefix>run_iops,
// <prefix>run_bandwidth_bytes_per_second, <prefix>run_io_total and
// <prefix>run_io_bytes_total (the last two by direction). Owned by the registry.
struct RunIoFamilies {
  RunIoFamilies(prometheus::Registry& registry, const std::string& prefix,
                const std::string& iops_help);

  prometheus::Family<prometheus::Gauge>& iops;
  prometheus::Family<prometheus::Gauge>& bandwidth;
  prometheus::Family<prometheus::Counter>& ios;
  prometheus::Family<prometheus::Counter>& bytes;
  // iostat -x of the device over the last interval (real block devices only, from
  // Sample.device): <prefix>run_device_utilization_ratio, _queue_size (aqu-sz),
  // _in_flight, _await_seconds and _merges_total (the last two by direction).
  prometheus::Family<prometheus::Gauge>& device_util;
  prometheus::Family<prometheus::Gauge>& device_queue;
  prometheus::Family<prometheus::Gauge>& device_in_flight;
  prometheus::Family<prometheus::Gauge>& device_await;
  prometheus::Family<prometheus::Counter>& device_merges;
};

// One run attempt's series in RunIoFamilies. The rate gauges describe a *running*
// attempt and are removed when it ends; the cumulative counters stay until the exporter's
// grace period is over. Not thread-safe: the exporter's lock guards it.
class RunIoSeries {
 public:
  // Adds the series with `labels` (and direction for the counters).
  void Add(RunIoFamilies& families, const prometheus::Labels& labels);
  // Adds the sample's I/O to the counters and sets the gauges to its rates over the
  // interval; a sample with device counters also sets the device series (added on the
  // first such sample, so files and sim: runs have none). REQUIRES: has_gauges().
  void Record(const v1::Sample& sample);
  bool has_gauges() const { return iops_ != nullptr; }
  // Removes the rate gauges; no-op once removed.
  void RemoveGauges(RunIoFamilies& families);
  // Removes the gauges and the counters; no-op once removed.
  void RemoveAll(RunIoFamilies& families);

 private:
  void AddDevice();

  RunIoFamilies* families_ = nullptr;
  prometheus::Labels labels_;
  prometheus::Gauge* iops_ = nullptr;
  prometheus::Gauge* bandwidth_ = nullptr;
  prometheus::Gauge* util_ = nullptr;  // the device series, once a sample had them
  prometheus::Gauge* queue_ = nullptr;
  prometheus::Gauge* in_flight_ = nullptr;
  prometheus::Gauge* await_[2] = {nullptr, nullptr};
  prometheus::Counter* merges_[2] = {nullptr, nullptr};
  prometheus::Counter* ios_[2] = {nullptr, nullptr};    // read, write
  prometheus::Counter* bytes_[2] = {nullptr, nullptr};  // read, write
};

// Erases the runs for which `done(series)` returns true; `done` may remove the series'
// metrics first (std::erase_if hands a map's predicate only const entries).
template <typename Series, typename Done>
void EraseRunsIf(std::map<uint64_t, Series>& runs, Done done) {
  for (auto it = runs.begin(); it != runs.end();)
    it = done(it->second) ? runs.erase(it) : std::next(it);
}

}  // namespace blkbench

#endif  // BLKBENCH_COMMON_METRICS_RUN_SERIES_H_
