// The metrics `blkbench gate` compares (iops, bw, pNN latency percentiles, mean_lat):
// their direction, how one run yields one sample, and how values are printed.
#ifndef BLKBENCH_CONTROLLER_GATE_GATE_METRICS_H_
#define BLKBENCH_CONTROLLER_GATE_GATE_METRICS_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "blkbench/v1/metrics.pb.h"
#include "common/histogram.h"
#include "controller/gate/verdict.h"

namespace blkbench::gate {

enum class MetricKind { kIops, kBandwidth, kLatencyPercentile, kLatencyMean };

struct MetricDef {
  std::string name;  // as requested: "iops", "bw", "p99.9", "mean_lat"
  MetricKind kind = MetricKind::kIops;
  double percentile = 0.0;  // kLatencyPercentile only, in (0, 100]
  Direction direction = Direction::kHigherIsBetter;

  bool IsLatency() const {
    return kind == MetricKind::kLatencyPercentile || kind == MetricKind::kLatencyMean;
  }
};

// "iops", "bw" (higher is better); "p<N>" for any percentile 0 < N <= 100 (p50, p90,
// p99, p99.9, ...) and "mean_lat" (lower is better). InvalidArgument for anything else,
// listing the accepted names.
absl::StatusOr<MetricDef> ParseMetric(std::string_view name);

// One run's sample of `def`: the run's own IOPS or bandwidth, or the percentile / mean of
// the run's own latency histogram (result.lat). Why per-run histograms: a repeat's tail is
// a property of that repeat; averaging fio's per-job percentiles is not a percentile of
// anything. FailedPrecondition when the run's histogram is empty; InvalidArgument when it
// is malformed (LatencyHistogram::FromProto's message).
absl::StatusOr<double> RunSample(const MetricDef& def, const v1::RunResult& result);

// The metric on a side's merged histogram (all runs' histograms added), for context next
// to the per-run samples. NaN for throughput metrics and for an empty histogram.
double MergedValue(const MetricDef& def, const LatencyHistogram& merged);

// "633.1k" (IOPS), "829.7MiB/s", "12.3us"; "-" for NaN.
std::string FormatMetricValue(const MetricDef& def, double value);

}  // namespace blkbench::gate

#endif  // BLKBENCH_CONTROLLER_GATE_GATE_METRICS_H_
