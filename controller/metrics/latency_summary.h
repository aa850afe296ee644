// SummaryFamily: a Prometheus summary whose quantiles are set from exact fio-style
// histograms instead of being estimated by prometheus-cpp's own (CKMS) Summary.
#ifndef BLKBENCH_CONTROLLER_METRICS_LATENCY_SUMMARY_H_
#define BLKBENCH_CONTROLLER_METRICS_LATENCY_SUMMARY_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "prometheus/collectable.h"
#include "prometheus/labels.h"
#include "prometheus/metric_family.h"

namespace blkbench {

// Why a custom Collectable: `quantile` is reserved for summaries (promtool rejects it on
// a gauge), and prometheus-cpp's Summary can only estimate quantiles from observations
// it sees one by one. Agents send per-interval histogram deltas, whose exact
// percentiles are what blkbench reports everywhere else. Thread-safe.
class SummaryFamily final : public prometheus::Collectable {
 public:
  // `quantiles` are the quantile label values, e.g. {0.5, 0.99, 0.999}.
  SummaryFamily(std::string name, std::string help, std::vector<double> quantiles);

  // Sets the series `labels` (created if new): its quantile values (one per
  // constructor quantile; NaN = no observations this interval), and adds `count`
  // observations summing to `sum` to its cumulative _count and _sum.
  void Update(const prometheus::Labels& labels, const std::vector<double>& values, uint64_t count,
              double sum);
  // Removes the series; no-op if absent.
  void Remove(const prometheus::Labels& labels);
  size_t size() const;

  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  struct Series {
    std::vector<double> values;
    uint64_t count = 0;
    double sum = 0;
  };
  const std::string name_;
  const std::string help_;
  const std::vector<double> quantiles_;
  mutable absl::Mutex mu_;
  std::map<prometheus::Labels, Series> series_ ABSL_GUARDED_BY(mu_);
};

}  // namespace blkbench

#endif  // BLKBENCH_CONTROLLER_METRICS_LATENCY_SUMMARY_H_
