// AgentExporter: the agent's Prometheus /metrics — its devices and their state, the
// running runs' live I/O rates and latency, CPU usage, the sample buffer and the
// connection to the controller — fed through AgentObserver.
#ifndef BLKBENCH_AGENT_METRICS_AGENT_EXPORTER_H_
#define BLKBENCH_AGENT_METRICS_AGENT_EXPORTER_H_

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
#include "agent/metrics/observer.h"
#include "common/clock.h"
#include "common/http/http_server.h"
#include "common/metrics/run_series.h"
#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/gauge.h"
#include "prometheus/histogram.h"
#include "prometheus/registry.h"

namespace blkbench {

struct AgentExporterOptions {
  // host:port served at /metrics; port 0 picks a free one; "" = no HTTP (Scrape() only).
  std::string listen = "127.0.0.1:9471";
  // A finished run's counters and histogram stay this long after it ends (so the last
  // scrape has its totals and rate() windows over the end stay right); then all of the
  // run's series are removed, keeping label cardinality bounded.
  int64_t finished_grace_ms = 5 * 60'000;
  // At most this many finished runs keep their series: past it the run that ended first
  // loses them at once, grace period or not (~6 KB of heap each).
  size_t max_finished_runs = 256;
};

// Upper bounds (seconds) of the coarse latency histogram buckets: 10 us .. 10 s, the
// range between an Optane read and a stalled HDD, in 1-2.5-5 steps.
const std::vector<double>& CoarseLatencyBuckets();

// Thread-safe.
class AgentExporter final : public AgentObserver {
 public:
  // Starts serving, with `security` (HTTPS, client certificates, a bearer token; default
  // plain). Unavailable when `options.listen` cannot be bound.
  static absl::StatusOr<std::unique_ptr<AgentExporter>> Start(const AgentExporterOptions& options,
                                                              Clock& clock,
                                                              const HttpSecurity& security = {});
  ~AgentExporter() override;

  // "host:port" actually bound ("" when not serving): what the agent reports to the
  // controller for service discovery.
  std::string address() const { return http_ ? http_->address() : ""; }
  int port() const { return http_ ? http_->port() : 0; }
  // Everything /metrics serves, in the Prometheus text format (sweeps first).
  std::string Scrape();
  // Removes the series of runs whose grace period is over. Scrape() and every run's
  // start and end call it, so series go without a scraper too (an agent whose /metrics
  // nobody reads, or with no metrics_listen at all).
  void Sweep();
  // Runs that still have series: running, or ended within the grace period (at most
  // max_finished_runs of those).
  size_t TrackedRuns() const;

  void OnRegister(const v1::Register& reg) override;
  void OnConnection(bool connected) override;
  void OnRunStarted(const v1::RunAssignment& run) override;
  void OnRunSample(const v1::RunAssignment& run, const v1::Sample& sample) override;
  void OnRunEnded(const v1::RunAssignment& run, const v1::RunFinished& finished) override;
  void OnSampleSent(bool resend) override;
  void OnSampleBuffer(size_t buffered, size_t acked, size_t dropped) override;

 private:
  struct RunSeries {
    prometheus::Labels labels;
    std::string device;
    uint32_t attempt = 0;
    int64_t ended_ms = -1;  // -1 while running
    RunIoSeries io;
    std::vector<prometheus::Gauge*> percentiles;  // per kReportedPercentiles
    prometheus::Histogram* latency = nullptr;
  };

  AgentExporter(const AgentExporterOptions& options, Clock& clock);
  RunSeries& SeriesFor(const v1::RunAssignment& run) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void RemoveGauges(RunSeries& s) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void RemoveAll(RunSeries& s) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void SetDeviceBusy(const std::string& device, bool busy) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Removes every series of the run and forgets it (runs_by_id_, ended_).
  void Forget(std::map<uint64_t, RunSeries>::iterator it) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Forgets the ended runs past the grace period, then the oldest beyond the cap.
  void SweepLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const AgentExporterOptions options_;
  Clock& clock_;
  std::shared_ptr<prometheus::Registry> registry_;
  std::unique_ptr<HttpServer> http_;  // null when not serving

  // Families are owned by registry_; mu_ guards which series exist.
  prometheus::Family<prometheus::Gauge>& info_;
  prometheus::Family<prometheus::Gauge>& device_info_;
  prometheus::Family<prometheus::Gauge>& device_busy_;
  prometheus::Gauge& connected_;
  prometheus::Counter& registrations_;
  prometheus::Counter& disconnects_;
  prometheus::Gauge& runs_active_;
  prometheus::Family<prometheus::Counter>& runs_finished_;
  RunIoFamilies run_io_;
  prometheus::Family<prometheus::Gauge>& run_percentile_;
  prometheus::Family<prometheus::Histogram>& run_latency_;
  prometheus::Family<prometheus::Counter>& samples_sent_;
  prometheus::Counter& samples_acked_;
  prometheus::Counter& samples_dropped_;
  prometheus::Gauge& samples_buffered_;
  prometheus::Family<prometheus::Counter>& cpu_seconds_;

  mutable absl::Mutex mu_;
  std::map<uint64_t, RunSeries> runs_by_id_ ABSL_GUARDED_BY(mu_);
  // The ended runs of runs_by_id_ as (ended_ms, run id), oldest first.
  std::set<std::pair<int64_t, uint64_t>> ended_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, prometheus::Gauge*> device_info_by_path_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, prometheus::Gauge*> busy_by_path_ ABSL_GUARDED_BY(mu_);
  prometheus::Gauge* info_series_ ABSL_GUARDED_BY(mu_) = nullptr;
  std::string hostname_ ABSL_GUARDED_BY(mu_);
  std::string host_kernel_ ABSL_GUARDED_BY(mu_);
  double cpu_reported_[2] ABSL_GUARDED_BY(mu_) = {0, 0};  // user, system seconds
};

}  // namespace blkbench

#endif  // BLKBENCH_AGENT_METRICS_AGENT_EXPORTER_H_
