// The standard process_* metrics (Prometheus client conventions: CPU seconds, resident
// and virtual memory, open and maximum file descriptors, start time, threads) and
// blkbench_build_info{version, revision}, for both daemons' /metrics. prometheus-cpp has
// no process collector; this reads /proc/self at every scrape.
#ifndef BLKBENCH_COMMON_METRICS_PROCESS_METRICS_H_
#define BLKBENCH_COMMON_METRICS_PROCESS_METRICS_H_

#include <vector>

#include "prometheus/metric_family.h"

namespace blkbench {

// The families as of now. Thread-safe; a value /proc does not give is left out.
std::vector<prometheus::MetricFamily> CollectProcessMetrics();

}  // namespace blkbench

#endif  // BLKBENCH_COMMON_METRICS_PROCESS_METRICS_H_
