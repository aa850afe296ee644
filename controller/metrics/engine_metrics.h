// How an engine run's internals (RunResult.internals, engine/model/engine_runner.h) are
// exported: one Prometheus metric per quantity, with its unit in the name (`_seconds`,
// `_ratio`, `_per_io`, counters `_total`), instead of one gauge mixing nanoseconds,
// ratios, counts and a trace hash under a `key` label. Known keys have hand-written
// names and help; any other key follows its suffix, so a new internal is exported
// without code here. Hashes and bit flags are not quantities and are not exported.
#ifndef BLKBENCH_CONTROLLER_METRICS_ENGINE_METRICS_H_
#define BLKBENCH_CONTROLLER_METRICS_ENGINE_METRICS_H_

#include <optional>
#include <string>

namespace blkbench {

struct EngineMetric {
  enum class Type { kGauge, kCounter };
  std::string name;  // "blkbench_engine_lock_contended_ratio"
  std::string help;
  Type type = Type::kGauge;
  std::string label;        // an extra label ("stage", "lock", "kind"), or ""
  std::string label_value;  // its value for this key
  double scale = 1;         // exported value = internal value * scale (ns -> s: 1e-9)
};

// The metric for internal `key`, or nullopt for keys that are not quantities.
std::optional<EngineMetric> EngineMetricFor(const std::string& key);

}  // namespace blkbench

#endif  // BLKBENCH_CONTROLLER_METRICS_ENGINE_METRICS_H_
