// PrometheusExporter: metric families, per-run series lifecycle and the HTTP endpoints.
#include "controller/metrics/prometheus_exporter.h"

#include <algorithm>
#include <cmath>
#include <exception>
#include <limits>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "common/histogram.h"
#include "common/metrics/process_metrics.h"
#include "common/metrics/run_labels.h"
#include "common/placement.h"
#include "controller/metrics/engine_metrics.h"
#include "controller/metrics/http_sd.h"
#include "controller/metrics/instrumented_store.h"
#include "prometheus/text_serializer.h"
#include "workloads/format.h"

namespace blkbench {
namespace {

std::vector<double> QuantileLabels() {
  std::vector<double> out;
  for (const ReportedPercentile& p : kReportedPercentiles) out.push_back(p.quantile);
  return out;
}
constexpr double kNsPerSecond = 1e9;

// "RUN_QUEUED" -> "queued", "EXPERIMENT_RUNNING" -> "running".
std::string StateLabel(const std::string& enum_name, const std::string& prefix) {
  std::string s = enum_name.rfind(prefix, 0) == 0 ? enum_name.substr(prefix.size()) : enum_name;
  return absl::AsciiStrToLower(s);
}

// Labels of every per-run series. All are functions of (run, attempt), so they add no
// cardinality beyond one set per live run. `agent` is the run's agent when known.
prometheus::Labels SeriesLabels(const v1::Run& run, const v1::CellSpec& cell,
                                const v1::AgentInfo* agent) {
  // The kernel that served the run's device: a VM test host's guest, else the agent's.
  std::string kernel = agent ? agent->host().kernel_release() : "";
  if (agent != nullptr) {
    for (const v1::DeviceFacts& d : agent->devices()) {
      if (d.path() == run.device_path()) kernel = DeviceKernelRelease(*agent, d);
    }
  }
  prometheus::Labels labels =
      RunLabels(run.experiment_id(), run.id(), cell,
                agent ? agent->host().hostname() : run.agent_id(), run.device_path(), kernel);
  labels["cell_without_kernel"] = CellLabelWithout(cell, "kernel");
  labels["agent"] = run.agent_id();
  return labels;
}

}  // namespace

PrometheusExporter::PrometheusExporter(const ExporterOptions& options, Clock& clock)
    : options_(options),
      clock_(clock),
      registry_(std::make_shared<prometheus::Registry>()),
      run_latency_(std::make_shared<SummaryFamily>(
          "blkbench_run_latency_seconds",
          "Completion latency of a running run: quantiles over its last sample interval from "
          "the exact fio-style histogram (NaN when the interval completed no I/O); _sum and "
          "_count over the attempt so far",
          QuantileLabels())),
      run_io_(*registry_, "blkbench_",
              "I/O operations per second of a running run over its last sample interval, as "
              "streamed by its agent"),
      runs_(prometheus::BuildGauge()
                .Name("blkbench_runs")
                .Help("Runs in the store by state")
                .Register(*registry_)),
      experiments_(prometheus::BuildGauge()
                       .Name("blkbench_experiments")
                       .Help("Experiments in the store by state")
                       .Register(*registry_)),
      agents_(prometheus::BuildGauge()
                  .Name("blkbench_agents")
                  .Help("Known agents by connection state")
                  .Register(*registry_)),
      agent_connected_(prometheus::BuildGauge()
                           .Name("blkbench_agent_connected")
                           .Help("1 while the agent's stream to the controller is open, else 0")
                           .Register(*registry_)),
      agent_devices_(prometheus::BuildGauge()
                         .Name("blkbench_agent_devices")
                         .Help("Devices an agent offers (allowlisted and simulated), by class")
                         .Register(*registry_)),
      result_iops_(prometheus::BuildGauge()
                       .Name("blkbench_run_result_iops")
                       .Help("I/O operations per second of a finished run over its whole "
                             "measured time (kept for the grace period after it ends)")
                       .Register(*registry_)),
      result_bandwidth_(prometheus::BuildGauge()
                            .Name("blkbench_run_result_bandwidth_bytes_per_second")
                            .Help("Bytes per second of a finished run over its whole measured "
                                  "time")
                            .Register(*registry_)),
      result_latency_(prometheus::BuildGauge()
                          .Name("blkbench_run_result_latency_percentile_seconds")
                          .Help("Completion latency percentile of a finished run, exact from "
                                "its merged histogram")
                          .Register(*registry_)),
      samples_ingested_(prometheus::BuildCounter()
                            .Name("blkbench_samples_ingested_total")
                            .Help("Run samples from agents stored and exported (duplicates not "
                                  "counted)")
                            .Register(*registry_)
                            .Add({})),
      samples_duplicate_(prometheus::BuildCounter()
                             .Name("blkbench_samples_duplicate_total")
                             .Help("Run samples received again after a lost acknowledgement "
                                   "(stored once, ignored here)")
                             .Register(*registry_)
                             .Add({})) {
  service_ = std::make_unique<ServiceMetrics>(*registry_, InstrumentedStore::Operations());
  // What an operator must see at a glance: whether anything is served in the clear.
  const bool insecure = options.grpc_transport == "plaintext_insecure" ||
                        (!options.listen.empty() && !IsLoopbackAddress(options.listen) &&
                         !(options.security.tls() && options.security.authenticates()));
  prometheus::BuildGauge()
      .Name("blkbench_controller_security_info")
      .Help("Always 1; labels say how the gRPC and HTTP listeners are secured")
      .Register(*registry_)
      .Add({{"grpc", options.grpc_transport},
            {"http", options.listen.empty() ? "none" : options.security.Describe()}})
      .Set(1);
  prometheus::BuildGauge()
      .Name("blkbench_controller_insecure")
      .Help("1 when --insecure let a non-loopback listener run without TLS or authentication")
      .Register(*registry_)
      .Add({})
      .Set(insecure ? 1 : 0);
  // Every state from the start, so dashboards see zeros rather than no data.
  OnStateCounts(StateCounts{});
  OnAgentsChanged({});
}

absl::StatusOr<std::unique_ptr<PrometheusExporter>> PrometheusExporter::Start(
    const ExporterOptions& options, Clock& clock) {
  std::unique_ptr<PrometheusExporter> e(new PrometheusExporter(options, clock));
  if (options.listen.empty()) return e;
  PrometheusExporter* raw = e.get();
  std::map<std::string, HttpHandler> handlers;
  handlers["/metrics"] = [raw](const HttpRequest&) {
    return HttpResponse{200, kPrometheusContentType, raw->Scrape()};
  };
  handlers["/sd/agents"] = [raw](const HttpRequest&) {
    return HttpResponse{200, "application/json", raw->AgentTargets()};
  };
  // Two threads: a scrape every few seconds, discovery and the results API beside it.
  auto http = HttpServer::Start(options.listen, handlers, 2, options.security);
  if (!http.ok()) {
    return absl::UnavailableError(absl::StrCat("metrics: ", http.status().message()));
  }
  e->http_ = std::move(*http);
  return e;
}

PrometheusExporter::~PrometheusExporter() {
  http_.reset();  // stop serving before the registry and families go away
}

void PrometheusExporter::AddHandler(const std::string& path, HttpHandler handler) {
  if (http_) http_->Handle(path, std::move(handler));
}

std::string PrometheusExporter::AgentTargets() const {
  absl::MutexLock lock(&mu_);
  return AgentTargetsJson(agents_seen_, metrics_address_by_agent_);
}

std::string PrometheusExporter::Scrape() const {
  std::vector<prometheus::MetricFamily> families = registry_->Collect();
  for (prometheus::MetricFamily& f : run_latency_->Collect()) families.push_back(std::move(f));
  for (prometheus::MetricFamily& f : CollectProcessMetrics()) families.push_back(std::move(f));
  return prometheus::TextSerializer().Serialize(families);
}

PrometheusExporter::RunSeries& PrometheusExporter::SeriesFor(const v1::Run& run,
                                                             const v1::CellSpec& cell) {
  const v1::AgentInfo* agent = nullptr;
  for (const v1::AgentInfo& a : agents_seen_) {
    if (a.agent_id() == run.agent_id()) agent = &a;
  }
  prometheus::Labels labels = SeriesLabels(run, cell, agent);
  auto it = runs_by_id_.find(run.id());
  if (it != runs_by_id_.end()) {
    if (it->second.attempt == run.attempt() && it->second.labels == labels) return it->second;
    // A new attempt (maybe elsewhere): its counters start again from zero.
    Forget(it);
  }
  RunSeries& s = runs_by_id_[run.id()];
  s.labels = labels;
  s.attempt = run.attempt();
  s.io.Add(run_io_, labels);
  return s;
}

void PrometheusExporter::RemoveGauges(RunSeries& s) {
  if (!s.io.has_gauges()) return;  // already removed
  s.io.RemoveGauges(run_io_);
  run_latency_->Remove(s.labels);
}

void PrometheusExporter::RemoveAll(RunSeries& s) {
  RemoveGauges(s);
  s.io.RemoveAll(run_io_);
  for (auto& [family, gauge] : s.results) family->Remove(gauge);
  s.results.clear();
  for (auto& [family, counter] : s.result_counters) family->Remove(counter);
  s.result_counters.clear();
}

void PrometheusExporter::Forget(std::map<uint64_t, RunSeries>::iterator it) {
  RemoveAll(it->second);
  if (it->second.finished_ms >= 0) finished_.erase({it->second.finished_ms, it->first});
  runs_by_id_.erase(it);
}

void PrometheusExporter::OnRunSample(const v1::Run& run, const v1::CellSpec& cell,
                                     const v1::Sample& sample) {
  absl::MutexLock lock(&mu_);
  auto existing = runs_by_id_.find(run.id());
  if (existing != runs_by_id_.end() && existing->second.attempt == run.attempt() &&
      (sample.seq() <= existing->second.last_seq || existing->second.finished_ms >= 0)) {
    samples_duplicate_.Increment();  // a resend after a lost ack, or after the end
    return;
  }
  if (existing != runs_by_id_.end() && run.attempt() < existing->second.attempt) {
    samples_duplicate_.Increment();  // a stale attempt's late resend
    return;
  }
  RunSeries& s = SeriesFor(run, cell);
  s.last_seq = sample.seq();
  s.last_sample_ms = clock_.MonotonicMs();
  samples_ingested_.Increment();

  s.io.Record(sample);
  // Quantiles of this interval's delta histogram: the same numbers `blkbench` shows,
  // never an average of percentiles.
  auto hist = LatencyHistogram::FromProto(sample.lat());
  const std::vector<double> values = IntervalPercentiles(hist);
  if (hist.ok()) {
    run_latency_->Update(s.labels, values, hist->count(), sample.lat().sum_ns() / kNsPerSecond);
  } else {
    run_latency_->Update(s.labels, values, 0, 0.0);  // a malformed histogram counts nothing
  }
}

void PrometheusExporter::OnRunResult(const v1::Run& run, const v1::CellSpec& cell,
                                     const v1::RunResult& result) {
  absl::MutexLock lock(&mu_);
  auto existing = runs_by_id_.find(run.id());
  if (existing != runs_by_id_.end() &&
      (existing->second.attempt > run.attempt() || !existing->second.results.empty())) {
    return;  // a stale attempt, or the result was already reported
  }
  // A run too short to send a sample still gets its series here.
  RunSeries& s = SeriesFor(run, cell);
  auto set = [&s](prometheus::Family<prometheus::Gauge>& family, const prometheus::Labels& labels,
                  double value) {
    prometheus::Gauge& g = family.Add(labels);
    g.Set(value);
    s.results.emplace_back(&family, &g);
  };
  set(result_iops_, s.labels, result.iops());
  set(result_bandwidth_, s.labels, result.bw_bytes_per_sec());
  const v1::LatencySummary& lat = result.lat_summary();
  const std::pair<const char*, uint64_t> percentiles[] = {
      {"50", lat.p50_ns()}, {"99", lat.p99_ns()}, {"99.9", lat.p999_ns()}};
  for (const auto& [label, ns] : percentiles) {
    set(result_latency_, With(s.labels, "percentile", label),
        static_cast<double>(ns) / kNsPerSecond);
  }
  for (const auto& [key, value] : result.internals()) {
    std::optional<EngineMetric> m = EngineMetricFor(key);
    if (!m.has_value()) continue;
    const prometheus::Labels labels =
        m->label.empty() ? s.labels : With(s.labels, m->label, m->label_value);
    const double v = value * m->scale;
    if (m->type == EngineMetric::Type::kGauge) {
      auto*& family = engine_gauges_[m->name];
      if (family == nullptr) {
        family = &prometheus::BuildGauge().Name(m->name).Help(m->help).Register(*registry_);
      }
      set(*family, labels, v);
    } else {
      auto*& family = engine_counters_[m->name];
      if (family == nullptr) {
        family = &prometheus::BuildCounter().Name(m->name).Help(m->help).Register(*registry_);
      }
      prometheus::Counter& c = family->Add(labels);
      if (v > 0) c.Increment(v);  // a finished run's count, set once
      s.result_counters.emplace_back(family, &c);
    }
  }
}

void PrometheusExporter::OnPlacement(double seconds, const std::vector<v1::Run>& placed) {
  service_->ObservePlacement(seconds, placed);
}

void PrometheusExporter::OnAgentRegistered(const v1::AgentInfo& info,
                                           const std::string& metrics_address) {
  absl::MutexLock lock(&mu_);
  metrics_address_by_agent_[info.agent_id()] = metrics_address;
  for (v1::AgentInfo& a : agents_seen_) {
    if (a.agent_id() == info.agent_id()) {
      a = info;
      return;
    }
  }
  agents_seen_.push_back(info);
  std::sort(
      agents_seen_.begin(), agents_seen_.end(),
      [](const v1::AgentInfo& a, const v1::AgentInfo& b) { return a.agent_id() < b.agent_id(); });
}

void PrometheusExporter::OnRunFinished(const v1::Run& run) {
  absl::MutexLock lock(&mu_);
  auto it = runs_by_id_.find(run.id());
  if (it == runs_by_id_.end() || it->second.finished_ms >= 0) return;
  it->second.finished_ms = clock_.MonotonicMs();
  finished_.emplace(it->second.finished_ms, it->first);
  RemoveGauges(it->second);
  while (finished_.size() > options_.max_finished_runs) {
    Forget(runs_by_id_.find(finished_.begin()->second));
  }
}

void PrometheusExporter::Sweep() {
  absl::MutexLock lock(&mu_);
  const int64_t now = clock_.MonotonicMs();
  while (!finished_.empty() && now - finished_.begin()->first >= options_.finished_grace_ms) {
    Forget(runs_by_id_.find(finished_.begin()->second));
  }
  EraseRunsIf(runs_by_id_, [&](RunSeries& s) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    const bool idle = s.finished_ms < 0 && now - s.last_sample_ms >= options_.idle_timeout_ms;
    if (idle) RemoveAll(s);
    return idle;
  });
}

size_t PrometheusExporter::TrackedRuns() const {
  absl::MutexLock lock(&mu_);
  return runs_by_id_.size();
}

void PrometheusExporter::OnAgentsChanged(const std::vector<v1::AgentInfo>& agents) {
  absl::MutexLock lock(&mu_);
  agents_seen_ = agents;
  int64_t connected = 0;
  std::map<std::string, bool> agent_up;
  std::map<std::pair<std::string, std::string>, int64_t> devices;
  for (const v1::AgentInfo& a : agents) {
    connected += a.connected() ? 1 : 0;
    agent_up[a.agent_id()] = a.connected();
    for (const v1::DeviceFacts& d : a.devices()) ++devices[{a.agent_id(), d.device_class()}];
  }
  agents_.Add({{"state", "connected"}}).Set(static_cast<double>(connected));
  agents_.Add({{"state", "disconnected"}})
      .Set(static_cast<double>(static_cast<int64_t>(agents.size()) - connected));

  // Agents and classes that went away lose their series; the rest are (re)set.
  for (auto it = agent_connected_by_id_.begin(); it != agent_connected_by_id_.end();) {
    if (agent_up.count(it->first) == 0) {
      agent_connected_.Remove(it->second);
      it = agent_connected_by_id_.erase(it);
    } else {
      ++it;
    }
  }
  for (const auto& [id, up] : agent_up) {
    prometheus::Gauge*& g = agent_connected_by_id_[id];
    if (g == nullptr) g = &agent_connected_.Add({{"agent", id}});
    g->Set(up ? 1 : 0);
  }
  for (auto it = devices_by_agent_class_.begin(); it != devices_by_agent_class_.end();) {
    if (devices.count(it->first) == 0) {
      agent_devices_.Remove(it->second);
      it = devices_by_agent_class_.erase(it);
    } else {
      ++it;
    }
  }
  for (const auto& [key, n] : devices) {
    prometheus::Gauge*& g = devices_by_agent_class_[key];
    if (g == nullptr) g = &agent_devices_.Add({{"agent", key.first}, {"device_class", key.second}});
    g->Set(static_cast<double>(n));
  }
}

void PrometheusExporter::OnStateCounts(const StateCounts& counts) {
  absl::MutexLock lock(&mu_);
  for (int s = v1::RunState_MIN; s <= v1::RunState_MAX; ++s) {
    if (!v1::RunState_IsValid(s) || s == v1::RUN_STATE_UNSPECIFIED) continue;
    auto it = counts.runs.find(static_cast<v1::RunState>(s));
    runs_.Add({{"state", StateLabel(v1::RunState_Name(s), "RUN_")}})
        .Set(it == counts.runs.end() ? 0 : static_cast<double>(it->second));
  }
  for (int s = v1::ExperimentState_MIN; s <= v1::ExperimentState_MAX; ++s) {
    if (!v1::ExperimentState_IsValid(s) || s == v1::EXPERIMENT_STATE_UNSPECIFIED) continue;
    auto it = counts.experiments.find(static_cast<v1::ExperimentState>(s));
    experiments_.Add({{"state", StateLabel(v1::ExperimentState_Name(s), "EXPERIMENT_")}})
        .Set(it == counts.experiments.end() ? 0 : static_cast<double>(it->second));
  }
}

}  // namespace blkbench
