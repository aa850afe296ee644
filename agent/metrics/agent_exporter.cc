// AgentExporter: metric families, per-run series lifecycle and the /metrics endpoint.
#include "agent/metrics/agent_exporter.h"

#include <sys/resource.h>

#include <map>

#include "absl/strings/str_cat.h"
#include "common/histogram.h"
#include "common/metrics/process_metrics.h"
#include "prometheus/text_serializer.h"
#include "workloads/format.h"

namespace blkbench {
namespace {

constexpr double kNsPerSecond = 1e9;

const char* OutcomeLabel(v1::RunOutcome outcome) {
  switch (outcome) {
    case v1::RUN_OUTCOME_SUCCEEDED:
      return "succeeded";
    case v1::RUN_OUTCOME_FAILED:
      return "failed";
    case v1::RUN_OUTCOME_CANCELED:
      return "canceled";
    default:
      return "unknown";
  }
}

double TimevalSeconds(const timeval& tv) {
  return static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) * 1e-6;
}

}  // namespace

const std::vector<double>& CoarseLatencyBuckets() {
  static const std::vector<double> kBuckets = {10e-6,  25e-6,  50e-6,  100e-6, 250e-6, 500e-6,
                                               1e-3,   2.5e-3, 5e-3,   10e-3,  25e-3,  50e-3,
                                               100e-3, 250e-3, 500e-3, 1.0,    2.5,    10.0};
  return kBuckets;
}

AgentExporter::AgentExporter(const AgentExporterOptions& options, Clock& clock)
    : options_(options),
      clock_(clock),
      registry_(std::make_shared<prometheus::Registry>()),
      info_(prometheus::BuildGauge()
                .Name("blkbench_agent_info")
                .Help("Always 1; labels name the agent, its host, kernel release and version")
                .Register(*registry_)),
      device_info_(prometheus::BuildGauge()
                       .Name("blkbench_agent_device_info")
                       .Help("Always 1 per device the agent offers (allowlisted or simulated); "
                             "labels give its class, model and whether it is simulated")
                       .Register(*registry_)),
      device_busy_(prometheus::BuildGauge()
                       .Name("blkbench_agent_device_busy")
                       .Help("1 while a run holds the device, 0 while it is free")
                       .Register(*registry_)),
      connected_(prometheus::BuildGauge()
                     .Name("blkbench_agent_controller_connected")
                     .Help("1 while the agent is registered on an open stream to the "
                           "controller, else 0")
                     .Register(*registry_)
                     .Add({})),
      registrations_(prometheus::BuildCounter()
                         .Name("blkbench_agent_registrations_total")
                         .Help("Registrations accepted by the controller (first connection "
                               "and every reconnection)")
                         .Register(*registry_)
                         .Add({})),
      disconnects_(prometheus::BuildCounter()
                       .Name("blkbench_agent_disconnects_total")
                       .Help("Registered streams to the controller that ended")
                       .Register(*registry_)
                       .Add({})),
      runs_active_(prometheus::BuildGauge()
                       .Name("blkbench_agent_runs_active")
                       .Help("Runs executing on this agent now")
                       .Register(*registry_)
                       .Add({})),
      runs_finished_(prometheus::BuildCounter()
                         .Name("blkbench_agent_runs_finished_total")
                         .Help("Runs this agent finished, by outcome")
                         .Register(*registry_)),
      run_io_(*registry_, "blkbench_agent_",
              "I/O operations per second of a running run over its last sample interval"),
      run_percentile_(prometheus::BuildGauge()
                          .Name("blkbench_agent_run_latency_percentile_seconds")
                          .Help("Completion latency percentile of a running run over its last "
                                "sample interval, exact from the fio-style histogram (NaN "
                                "when the interval completed no I/O)")
                          .Register(*registry_)),
      run_latency_(prometheus::BuildHistogram()
                       .Name("blkbench_agent_run_latency_seconds")
                       .Help("Completion latency of a run's current attempt in coarse buckets "
                             "(for heatmaps; exact percentiles are in "
                             "blkbench_agent_run_latency_percentile_seconds)")
                       .Register(*registry_)),
      samples_sent_(prometheus::BuildCounter()
                        .Name("blkbench_agent_samples_sent_total")
                        .Help("Run samples written to the controller stream, by kind (first "
                              "send or resend after a reconnect)")
                        .Register(*registry_)),
      samples_acked_(prometheus::BuildCounter()
                         .Name("blkbench_agent_samples_acked_total")
                         .Help("Run samples the controller acknowledged as durably stored")
                         .Register(*registry_)
                         .Add({})),
      samples_dropped_(prometheus::BuildCounter()
                           .Name("blkbench_agent_samples_dropped_total")
                           .Help("Run samples discarded unacknowledged (resend buffer full, or "
                                 "the controller rejected the run)")
                           .Register(*registry_)
                           .Add({})),
      samples_buffered_(prometheus::BuildGauge()
                            .Name("blkbench_agent_samples_buffered")
                            .Help("Run samples kept for resending until the controller "
                                  "acknowledges them")
                            .Register(*registry_)
                            .Add({})),
      cpu_seconds_(prometheus::BuildCounter()
                       .Name("blkbench_agent_cpu_seconds_total")
                       .Help("CPU time of the agent process, its executor threads and reaped "
                             "job processes, by mode (user, system)")
                       .Register(*registry_)) {
  for (const char* kind : {"first", "resend"}) samples_sent_.Add({{"kind", kind}});
  for (const char* outcome : {"succeeded", "failed", "canceled"}) {
    runs_finished_.Add({{"outcome", outcome}});
  }
  for (const char* mode : {"user", "system"}) cpu_seconds_.Add({{"mode", mode}});
}

absl::StatusOr<std::unique_ptr<AgentExporter>> AgentExporter::Start(
    const AgentExporterOptions& options, Clock& clock, const HttpSecurity& security) {
  std::unique_ptr<AgentExporter> e(new AgentExporter(options, clock));
  if (options.listen.empty()) return e;
  AgentExporter* raw = e.get();
  std::map<std::string, HttpHandler> handlers;
  handlers["/metrics"] = [raw](const HttpRequest&) {
    return HttpResponse{200, kPrometheusContentType, raw->Scrape()};
  };
  auto http = HttpServer::Start(options.listen, handlers, 1, security);
  if (!http.ok()) {
    return absl::UnavailableError(absl::StrCat("agent metrics: ", http.status().message()));
  }
  e->http_ = std::move(*http);
  return e;
}

AgentExporter::~AgentExporter() {
  http_.reset();  // stop serving before the registry and families go away
}

std::string AgentExporter::Scrape() {
  Sweep();
  {
    rusage self{}, children{};
    getrusage(RUSAGE_SELF, &self);
    getrusage(RUSAGE_CHILDREN, &children);
    const double now[2] = {TimevalSeconds(self.ru_utime) + TimevalSeconds(children.ru_utime),
                           TimevalSeconds(self.ru_stime) + TimevalSeconds(children.ru_stime)};
    absl::MutexLock lock(&mu_);
    const char* modes[2] = {"user", "system"};
    for (int m = 0; m < 2; ++m) {
      if (now[m] > cpu_reported_[m]) {
        cpu_seconds_.Add({{"mode", modes[m]}}).Increment(now[m] - cpu_reported_[m]);
        cpu_reported_[m] = now[m];
      }
    }
  }
  std::vector<prometheus::MetricFamily> families = registry_->Collect();
  for (prometheus::MetricFamily& f : CollectProcessMetrics()) families.push_back(std::move(f));
  return prometheus::TextSerializer().Serialize(families);
}

void AgentExporter::OnRegister(const v1::Register& reg) {
  absl::MutexLock lock(&mu_);
  if (info_series_ != nullptr) info_.Remove(info_series_);
  // `agent_id`, not `agent`: discovery (/sd/agents) sets the `agent` target label, and
  // Prometheus would rename a scraped `agent` to `exported_agent`.
  info_series_ = &info_.Add({{"agent_id", reg.agent_id()},
                             {"host", reg.host().hostname()},
                             {"kernel", reg.host().kernel_release()},
                             {"version", reg.version()}});
  info_series_->Set(1);
  hostname_ = reg.host().hostname();
  host_kernel_ = reg.host().kernel_release();
  std::map<std::string, bool> offered;
  for (const v1::DeviceFacts& d : reg.devices()) {
    offered[d.path()] = true;
    prometheus::Gauge*& g = device_info_by_path_[d.path()];
    if (g != nullptr) device_info_.Remove(g);
    g = &device_info_.Add({{"device", d.path()},
                           {"device_class", d.device_class()},
                           {"model", d.model()},
                           {"simulated", d.simulated() ? "true" : "false"}});
    g->Set(1);
    prometheus::Gauge*& busy = busy_by_path_[d.path()];
    if (busy == nullptr) {
      busy = &device_busy_.Add({{"device", d.path()}, {"device_class", d.device_class()}});
    }
  }
  // Devices no longer offered (the allowlist changed) lose their series.
  for (auto it = device_info_by_path_.begin(); it != device_info_by_path_.end();) {
    if (offered.count(it->first)) {
      ++it;
      continue;
    }
    device_info_.Remove(it->second);
    auto busy = busy_by_path_.find(it->first);
    if (busy != busy_by_path_.end()) {
      device_busy_.Remove(busy->second);
      busy_by_path_.erase(busy);
    }
    it = device_info_by_path_.erase(it);
  }
}

void AgentExporter::OnConnection(bool connected) {
  absl::MutexLock lock(&mu_);
  const bool was = connected_.Value() > 0;
  connected_.Set(connected ? 1 : 0);
  if (connected && !was) registrations_.Increment();
  if (!connected && was) disconnects_.Increment();
}

void AgentExporter::SetDeviceBusy(const std::string& device, bool busy) {
  auto it = busy_by_path_.find(device);
  if (it != busy_by_path_.end()) it->second->Set(busy ? 1 : 0);
}

AgentExporter::RunSeries& AgentExporter::SeriesFor(const v1::RunAssignment& run) {
  auto it = runs_by_id_.find(run.run_id());
  if (it != runs_by_id_.end()) {
    if (it->second.attempt == run.attempt()) return it->second;
    Forget(it);  // a new attempt of the run: counters start from zero
  }
  RunSeries& s = runs_by_id_[run.run_id()];
  s.attempt = run.attempt();
  s.device = run.device_path();
  // A real run's kernel label is the kernel it actually runs on, not the cell's glob.
  s.labels = RunLabels(run.experiment_id(), run.run_id(), run.cell(), hostname_, run.device_path(),
                       host_kernel_);
  s.io.Add(run_io_, s.labels);
  for (const ReportedPercentile& p : kReportedPercentiles) {
    s.percentiles.push_back(&run_percentile_.Add(With(s.labels, "percentile", p.label)));
  }
  s.latency = &run_latency_.Add(s.labels, CoarseLatencyBuckets());
  return s;
}

void AgentExporter::RemoveGauges(RunSeries& s) {
  s.io.RemoveGauges(run_io_);
  for (prometheus::Gauge* g : s.percentiles) run_percentile_.Remove(g);
  s.percentiles.clear();
}

void AgentExporter::RemoveAll(RunSeries& s) {
  RemoveGauges(s);
  s.io.RemoveAll(run_io_);
  if (s.latency != nullptr) run_latency_.Remove(s.latency);
  s.latency = nullptr;
}

void AgentExporter::Forget(std::map<uint64_t, RunSeries>::iterator it) {
  RemoveAll(it->second);
  if (it->second.ended_ms >= 0) ended_.erase({it->second.ended_ms, it->first});
  runs_by_id_.erase(it);
}

void AgentExporter::OnRunStarted(const v1::RunAssignment& run) {
  absl::MutexLock lock(&mu_);
  SweepLocked();
  SeriesFor(run);
  SetDeviceBusy(run.device_path(), true);
  runs_active_.Increment();
}

void AgentExporter::OnRunSample(const v1::RunAssignment& run, const v1::Sample& sample) {
  absl::MutexLock lock(&mu_);
  RunSeries& s = SeriesFor(run);
  if (s.ended_ms >= 0) return;  // a late sample after the end: nothing live to update
  s.io.Record(sample);
  auto hist = LatencyHistogram::FromProto(sample.lat());
  const std::vector<double> percentiles = IntervalPercentiles(hist);
  for (size_t i = 0; i < s.percentiles.size(); ++i) s.percentiles[i]->Set(percentiles[i]);
  if (!hist.ok() || hist->count() == 0) return;
  // Each fio bucket's count goes to the first coarse bucket whose bound holds the
  // bucket's representative value (within fio's 0.8 % bucket error).
  const std::vector<double>& bounds = CoarseLatencyBuckets();
  std::vector<double> increments(bounds.size() + 1, 0.0);
  const v1::Histogram& lat = sample.lat();
  for (int i = 0; i < lat.bucket_index_size() && i < lat.bucket_count_size(); ++i) {
    const double value =
        static_cast<double>(LatencyHistogram::BucketValue(lat.bucket_index(i))) / kNsPerSecond;
    size_t b = 0;
    while (b < bounds.size() && value > bounds[b]) ++b;
    increments[b] += static_cast<double>(lat.bucket_count(i));
  }
  s.latency->ObserveMultiple(increments, lat.sum_ns() / kNsPerSecond);
}

void AgentExporter::OnRunEnded(const v1::RunAssignment& run, const v1::RunFinished& finished) {
  absl::MutexLock lock(&mu_);
  runs_finished_.Add({{"outcome", OutcomeLabel(finished.outcome())}}).Increment();
  runs_active_.Decrement();
  SetDeviceBusy(run.device_path(), false);
  auto it = runs_by_id_.find(run.run_id());
  if (it == runs_by_id_.end() || it->second.attempt != run.attempt() || it->second.ended_ms >= 0) {
    return;
  }
  it->second.ended_ms = clock_.MonotonicMs();
  ended_.emplace(it->second.ended_ms, it->first);
  RemoveGauges(it->second);
  SweepLocked();
}

void AgentExporter::Sweep() {
  absl::MutexLock lock(&mu_);
  SweepLocked();
}

void AgentExporter::SweepLocked() {
  const int64_t now = clock_.MonotonicMs();
  while (!ended_.empty() && (ended_.size() > options_.max_finished_runs ||
                             now - ended_.begin()->first >= options_.finished_grace_ms)) {
    Forget(runs_by_id_.find(ended_.begin()->second));
  }
}

size_t AgentExporter::TrackedRuns() const {
  absl::MutexLock lock(&mu_);
  return runs_by_id_.size();
}

void AgentExporter::OnSampleSent(bool resend) {
  samples_sent_.Add({{"kind", resend ? "resend" : "first"}}).Increment();
}

void AgentExporter::OnSampleBuffer(size_t buffered, size_t acked, size_t dropped) {
  samples_buffered_.Set(static_cast<double>(buffered));
  if (acked > 0) samples_acked_.Increment(static_cast<double>(acked));
  if (dropped > 0) samples_dropped_.Increment(static_cast<double>(dropped));
}

}  // namespace blkbench
