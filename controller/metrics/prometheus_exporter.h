// PrometheusExporter: the controller's /metrics (prometheus-cpp) and /sd/agents (agent
// discovery for Prometheus), fed through the ControllerObserver interface with what
// agents stream and what the store holds.
#ifndef BLKBENCH_CONTROLLER_METRICS_PROMETHEUS_EXPORTER_H_
#define BLKBENCH_CONTROLLER_METRICS_PROMETHEUS_EXPORTER_H_

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "common/clock.h"
#include "common/http/http_server.h"
#include "common/metrics/run_series.h"
#include "controller/metrics/latency_summary.h"
#include "controller/metrics/observer.h"
#include "controller/metrics/service_metrics.h"
#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/gauge.h"
#include "prometheus/registry.h"

namespace blkbench {

struct ExporterOptions {
  // host:port serving /metrics and /sd/agents; port 0 picks a free one; "" = no HTTP
  // (Scrape() only).
  std::string listen = "127.0.0.1:9470";
  // A finished run's cumulative counters stay this long after it ends, so the final
  // totals are scraped and increase()/rate() windows over the end stay right; then every
  // series of the run is removed (bounded cardinality).
  int64_t finished_grace_ms = 5 * 60'000;
  // At most this many finished runs keep their series: past it the series of the run
  // that finished first go at once, grace period or not. Memory and scrape size grow with
  // the finished runs held (~50 KB of heap and ~17 KB of exposition for a sim run with its
  // engine internals), so the grace alone bounds them only by the rate runs end at.
  size_t max_finished_runs = 1'000;
  // A run that sent no sample for this long without being reported finished (its
  // report was missed, e.g. across a controller restart) is removed as well.
  int64_t idle_timeout_ms = 5 * 60'000;
  // HTTPS and client authentication of `listen` (default: plain, loopback).
  HttpSecurity security;
  // How the controller's gRPC port is served, for blkbench_controller_security_info:
  // "mutual_tls", "plaintext" (the Unix socket only) or "plaintext_insecure" (TCP with
  // --insecure, loopback included; blkbench_controller_insecure is then 1).
  std::string grpc_transport = "plaintext";
};

// Defaults, served on `listen` ("" = not served).
inline ExporterOptions ExporterListening(std::string listen) {
  ExporterOptions o;
  o.listen = std::move(listen);
  return o;
}

// Thread-safe. The per-interval series of a run (IOPS and bandwidth gauges, the latency
// summary) describe a *running* attempt and are removed as soon as the attempt ends, so
// sums over runs never count a finished run's last interval; its I/O counters follow
// after the grace period.
class PrometheusExporter final : public ControllerObserver {
 public:
  // Starts serving. Unavailable when `options.listen` cannot be bound.
  static absl::StatusOr<std::unique_ptr<PrometheusExporter>> Start(const ExporterOptions& options,
                                                                   Clock& clock);
  ~PrometheusExporter() override;

  // The TCP port actually bound, 0 when not serving.
  int port() const { return http_ ? http_->port() : 0; }
  // Serves `handler` at `path` on the metrics port too (e.g. the results API). No-op
  // when not serving.
  void AddHandler(const std::string& path, HttpHandler handler);
  // Stops serving HTTP (in-flight requests finish first); the observer side keeps
  // working. For owners whose handlers use an object that goes before this exporter.
  // Not concurrent with port() or AddHandler.
  void StopServing() { http_.reset(); }
  // The controller's own service metrics (store, placement, gRPC), in this registry.
  ServiceMetrics& service() { return *service_; }
  // The http_sd JSON served at /sd/agents (see http_sd.h).
  std::string AgentTargets() const;
  // Everything /metrics would serve, in the Prometheus text format.
  std::string Scrape() const;
  // Removes series of runs past their grace period or idle timeout. Called by the
  // controller's ticker. (The cap on finished runs is kept as each run finishes.)
  void Sweep();
  // Number of runs that still have series, running or within their grace (for tests and
  // the sweep's own bound). At most max_finished_runs of them are finished.
  size_t TrackedRuns() const;

  void OnRunSample(const v1::Run& run, const v1::CellSpec& cell, const v1::Sample& sample) override;
  void OnRunFinished(const v1::Run& run) override;
  void OnAgentsChanged(const std::vector<v1::AgentInfo>& agents) override;
  void OnStateCounts(const StateCounts& counts) override;
  void OnAgentRegistered(const v1::AgentInfo& info, const std::string& metrics_address) override;
  void OnRunResult(const v1::Run& run, const v1::CellSpec& cell,
                   const v1::RunResult& result) override;
  void OnPlacement(double seconds, const std::vector<v1::Run>& placed) override;

 private:
  // The series of one run attempt. Its gauges are removed once the attempt ended.
  struct RunSeries {
    prometheus::Labels labels;
    uint32_t attempt = 0;
    uint64_t last_seq = 0;
    int64_t last_sample_ms = 0;
    int64_t finished_ms = -1;  // -1 while running
    RunIoSeries io;
    // Final result and engine internals (after OnRunResult), removed with the counters.
    std::vector<std::pair<prometheus::Family<prometheus::Gauge>*, prometheus::Gauge*>> results;
    std::vector<std::pair<prometheus::Family<prometheus::Counter>*, prometheus::Counter*>>
        result_counters;
  };

  PrometheusExporter(const ExporterOptions& options, Clock& clock);
  RunSeries& SeriesFor(const v1::Run& run, const v1::CellSpec& cell)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void RemoveGauges(RunSeries& s) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void RemoveAll(RunSeries& s) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Removes every series of the run and forgets it (runs_by_id_, finished_).
  void Forget(std::map<uint64_t, RunSeries>::iterator it) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const ExporterOptions options_;
  Clock& clock_;
  std::shared_ptr<prometheus::Registry> registry_;
  std::shared_ptr<SummaryFamily> run_latency_;  // exposed beside registry_
  std::unique_ptr<ServiceMetrics> service_;
  std::unique_ptr<HttpServer> http_;  // null when not serving

  // Families are owned by registry_ and thread-safe themselves; mu_ guards which
  // series exist, so Add/Remove pairs stay consistent.
  RunIoFamilies run_io_;
  prometheus::Family<prometheus::Gauge>& runs_;
  prometheus::Family<prometheus::Gauge>& experiments_;
  prometheus::Family<prometheus::Gauge>& agents_;
  prometheus::Family<prometheus::Gauge>& agent_connected_;
  prometheus::Family<prometheus::Gauge>& agent_devices_;
  prometheus::Family<prometheus::Gauge>& result_iops_;
  prometheus::Family<prometheus::Gauge>& result_bandwidth_;
  prometheus::Family<prometheus::Gauge>& result_latency_;
  // Engine internals, one family per quantity (engine_metrics.h), registered on first use.
  std::map<std::string, prometheus::Family<prometheus::Gauge>*> engine_gauges_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, prometheus::Family<prometheus::Counter>*> engine_counters_
      ABSL_GUARDED_BY(mu_);
  prometheus::Counter& samples_ingested_;
  prometheus::Counter& samples_duplicate_;

  mutable absl::Mutex mu_;
  std::map<uint64_t, RunSeries> runs_by_id_ ABSL_GUARDED_BY(mu_);
  // The finished runs of runs_by_id_ as (finished_ms, run id), oldest first: the grace
  // sweep and the cap take from the front.
  std::set<std::pair<int64_t, uint64_t>> finished_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, prometheus::Gauge*> agent_connected_by_id_ ABSL_GUARDED_BY(mu_);
  std::map<std::pair<std::string, std::string>, prometheus::Gauge*> devices_by_agent_class_
      ABSL_GUARDED_BY(mu_);
  // The last agent list (OnAgentsChanged, updated by OnAgentRegistered) and where each
  // agent serves metrics, for /sd/agents and the host and kernel labels of runs.
  std::vector<v1::AgentInfo> agents_seen_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::string> metrics_address_by_agent_ ABSL_GUARDED_BY(mu_);
};

}  // namespace blkbench

#endif  // BLKBENCH_CONTROLLER_METRICS_PROMETHEUS_EXPORTER_H_
