// Metric names, directions and per-run samples for `blkbench gate`; see gate_metrics.h.
#include "controller/gate/gate_metrics.h"

#include <cmath>
#include <cstdio>
#include <limits>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace blkbench::gate {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::string Fixed(double v, int decimals, const char* suffix) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f%s", decimals, v, suffix);
  return buf;
}

}  // namespace

absl::StatusOr<MetricDef> ParseMetric(std::string_view name) {
  MetricDef def;
  def.name = std::string(name);
  if (name == "iops") {
    def.kind = MetricKind::kIops;
    return def;
  }
  if (name == "bw") {
    def.kind = MetricKind::kBandwidth;
    return def;
  }
  def.direction = Direction::kLowerIsBetter;
  if (name == "mean_lat") {
    def.kind = MetricKind::kLatencyMean;
    return def;
  }
  double p = 0.0;
  if (name.size() > 1 && name[0] == 'p' && absl::SimpleAtod(std::string(name.substr(1)), &p) &&
      p > 0.0 && p <= 100.0) {
    def.kind = MetricKind::kLatencyPercentile;
    def.percentile = p;
    return def;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown metric '", std::string(name),
                   "'; expected iops, bw, mean_lat or a latency percentile such as p50, p90, "
                   "p99, p99.9"));
}

absl::StatusOr<double> RunSample(const MetricDef& def, const v1::RunResult& result) {
  switch (def.kind) {
    case MetricKind::kIops:
      return result.iops();
    case MetricKind::kBandwidth:
      return result.bw_bytes_per_sec();
    case MetricKind::kLatencyPercentile:
    case MetricKind::kLatencyMean:
      break;
  }
  absl::StatusOr<LatencyHistogram> h = LatencyHistogram::FromProto(result.lat());
  if (!h.ok()) return h.status();
  if (h->count() == 0) return absl::FailedPreconditionError("empty latency histogram");
  if (def.kind == MetricKind::kLatencyMean) return h->mean_ns();
  return static_cast<double>(h->Percentile(def.percentile));
}

double MergedValue(const MetricDef& def, const LatencyHistogram& merged) {
  if (merged.count() == 0) return kNaN;
  switch (def.kind) {
    case MetricKind::kLatencyPercentile:
      return static_cast<double>(merged.Percentile(def.percentile));
    case MetricKind::kLatencyMean:
      return merged.mean_ns();
    case MetricKind::kIops:
    case MetricKind::kBandwidth:
      break;
  }
  return kNaN;
}

std::string FormatMetricValue(const MetricDef& def, double v) {
  if (std::isnan(v)) return "-";
  switch (def.kind) {
    case MetricKind::kIops:
      if (v >= 1e6) return Fixed(v / 1e6, 2, "M");
      if (v >= 1e3) return Fixed(v / 1e3, 1, "k");
      return Fixed(v, 0, "");
    case MetricKind::kBandwidth: {
      constexpr double kMiB = 1024.0 * 1024.0;
      if (v >= 1024.0 * kMiB) return Fixed(v / (1024.0 * kMiB), 2, "GiB/s");
      if (v >= kMiB) return Fixed(v / kMiB, 1, "MiB/s");
      return Fixed(v / 1024.0, 1, "KiB/s");
    }
    case MetricKind::kLatencyPercentile:
    case MetricKind::kLatencyMean:
      if (v >= 1e9) return Fixed(v / 1e9, 2, "s");
      if (v >= 1e6) return Fixed(v / 1e6, 2, "ms");
      if (v >= 1e3) return Fixed(v / 1e3, 1, "us");
      return Fixed(v, 0, "ns");
  }
  return "-";
}

}  // namespace blkbench::gate
