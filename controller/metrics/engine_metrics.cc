// The internal-key to metric mapping; see engine_metrics.h.
#include "controller/metrics/engine_metrics.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace blkbench {
namespace {

constexpr double kSecondsPerNs = 1e-9;

EngineMetric Gauge(std::string name, std::string help, double scale = 1) {
  return {"blkbench_engine_" + name, std::move(help), EngineMetric::Type::kGauge, "", "", scale};
}
EngineMetric Counter(std::string name, std::string help) {
  return {"blkbench_engine_" + name + "_total",
          std::move(help),
          EngineMetric::Type::kCounter,
          "",
          "",
          1};
}
EngineMetric WithLabel(EngineMetric m, std::string label, std::string value) {
  m.label = std::move(label);
  m.label_value = std::move(value);
  return m;
}

// "dispatch.requeues" -> "dispatch_requeues": only [a-z0-9_] stays in a metric name.
std::string Snake(absl::string_view key) {
  std::string out(key);
  for (char& c : out) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c))) c = '_';
    c = absl::ascii_tolower(static_cast<unsigned char>(c));
  }
  return out;
}

// A quantity by its spelling: nanoseconds become seconds (scaled), a share a ratio; a
// rate (per_*), ratio, level (mean, max, tag counts) or duration is a gauge; anything
// else counts events and is a counter.
EngineMetric Quantity(std::string name, std::string help) {
  double scale = 1;
  for (size_t at; (at = name.find("_ns")) != std::string::npos &&
                  (at + 3 == name.size() || name[at + 3] == '_');) {
    name.replace(at, 3, "_seconds");
    scale = kSecondsPerNs;
  }
  if (absl::EndsWith(name, "_share")) name = name.substr(0, name.size() - 6) + "_ratio";
  const bool gauge = absl::StrContains(name, "per_") || absl::EndsWith(name, "ratio") ||
                     absl::StrContains(name, "mean") || absl::StrContains(name, "max") ||
                     absl::EndsWith(name, "_tags") || absl::EndsWith(name, "_seconds");
  if (gauge) return Gauge(name, std::move(help), scale);
  EngineMetric m = Counter(name, std::move(help));
  m.scale = scale;
  return m;
}

}  // namespace

std::optional<EngineMetric> EngineMetricFor(const std::string& key) {
  absl::string_view k(key);
  if (absl::StrContains(k, "hash") || absl::EndsWith(k, "flags")) return std::nullopt;
  if (absl::ConsumePrefix(&k, "cpu_ns_per_io.")) {
    // lock_spin is also a stage here: the panel of CPU by stage shows it too.
    return WithLabel(Gauge("cpu_seconds_per_io",
                           "Simulated CPU time per completed I/O of a finished engine run, by "
                           "blk-mq stage",
                           kSecondsPerNs),
                     "stage", std::string(k));
  }
  if (key == "seq_ratio") {
    return Gauge("sequential_ratio",
                 "Share of requests a finished engine run issued to the driver that started "
                 "where the previous one ended");
  }
  if (key == "tags.waits") {
    return Counter("tag_waits",
                   "Sleeps in blk_mq_get_tag (no free tag) during a finished "
                   "engine run's measured time");
  }
  if (key == "tags.wakeups") {
    return Counter("tag_wakeups", "Wake-ups of tag waiters during a finished engine run");
  }
  if (key == "tags.single_allocs" || key == "tags.batch_allocs") {
    return WithLabel(Counter("tag_allocations",
                             "Tag allocations of a finished engine run: one tag at a time "
                             "(single) or blk_mq_get_tags batches (batch)"),
                     "kind", key == "tags.single_allocs" ? "single" : "batch");
  }
  if (key == "tags.batch_requested" || key == "tags.batch_obtained") {
    return WithLabel(Counter("batch_tags",
                             "Tags asked for (requested) and got (obtained) by batched "
                             "allocations of a finished engine run"),
                     "kind", key == "tags.batch_requested" ? "requested" : "obtained");
  }
  const std::string help = absl::StrCat(
      "Engine internal '", key, "' of a finished engine run (engine/model/engine_runner.h)");
  if (absl::ConsumePrefix(&k, "lock.")) {
    // lock.<name>.<quantity>, e.g. lock.dd_lock.contended_share: one metric per quantity
    // with the lock as a label.
    const size_t dot = k.rfind('.');
    if (dot != absl::string_view::npos) {
      const std::string what(k.substr(dot + 1));
      EngineMetric m = Quantity("lock_" + Snake(what),
                                absl::StrCat("Engine internal lock.LOCK.", what,
                                             " of a finished engine run, by lock (dd_lock, "
                                             "bfqd_lock, ...; engine/model/engine_runner.h)"));
      return WithLabel(m, "lock", std::string(k.substr(0, dot)));
    }
  }
  return Quantity(Snake(key), help);
}

}  // namespace blkbench
