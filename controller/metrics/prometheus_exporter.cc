// PrometheusExporter: metric families, per-run series lifecycle and the HTTP exposer.
#include "controller/metrics/prometheus_exporter.h"

#include <cmath>
#include <exception>
#include <limits>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "common/histogram.h"
#include "prometheus/text_serializer.h"
#include "workloads/format.h"

namespace blkbench {
namespace {

// The quantiles users compare kernels on (DESIGN.md: p50/p99/p99.9), and the
// LatencyHistogram::Percentile argument of each (as Summary() computes them).
struct Quantile {
  double quantile;
  double percentile;
};
constexpr Quantile kQuantiles[] = {{0.5, 50.0}, {0.99, 99.0}, {0.999, 99.9}};

std::vector<double> QuantileLabels() {
  std::vector<double> out;
  for (const Quantile& q : kQuantiles) out.push_back(q.quantile);
  return out;
}
constexpr const char* kDirections[] = {"read", "write"};
constexpr double kNsPerSecond = 1e9;

// "RUN_QUEUED" -> "queued", "EXPERIMENT_RUNNING" -> "running".
std::string StateLabel(const std::string& enum_name, const std::string& prefix) {
  std::string s = enum_name.rfind(prefix, 0) == 0 ? enum_name.substr(prefix.size()) : enum_name;
  return absl::AsciiStrToLower(s);
}

prometheus::Labels With(prometheus::Labels labels, const std::string& key,
                        const std::string& value) {
  labels[key] = value;
  return labels;
}

// Labels of every per-run series. All are functions of (run, attempt), so they add no
// cardinality beyond one set per live run.
prometheus::Labels RunLabels(const v1::Run& run, const v1::CellSpec& cell) {
  const std::string& scheduler = cell.queue().scheduler();
  const std::string& kernel = cell.target().kernel();
  return {{"experiment", std::to_string(run.experiment_id())},
          {"cell", workloads::CellLabel(cell)},
          {"run", std::to_string(run.id())},
          {"agent", run.agent_id()},
          {"device", run.device_path()},
          {"device_class", cell.target().device_class()},
          {"scheduler", scheduler.empty() ? "default" : scheduler},
          {"kernel", kernel.empty() ? "any" : kernel}};
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
      run_iops_(prometheus::BuildGauge()
                    .Name("blkbench_run_iops")
                    .Help("I/O operations per second of a running run over its last sample "
                          "interval, as streamed by its agent")
                    .Register(*registry_)),
      run_bandwidth_(prometheus::BuildGauge()
                         .Name("blkbench_run_bandwidth_bytes_per_second")
                         .Help("Bytes per second (read + write) of a running run over its last "
                               "sample interval")
                         .Register(*registry_)),
      run_ios_(prometheus::BuildCounter()
                   .Name("blkbench_run_io_total")
                   .Help("I/O operations completed by a run's current attempt, by direction")
                   .Register(*registry_)),
      run_bytes_(prometheus::BuildCounter()
                     .Name("blkbench_run_io_bytes_total")
                     .Help("Bytes transferred by a run's current attempt, by direction")
                     .Register(*registry_)),
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
  // Every state from the start, so dashboards see zeros rather than no data.
  OnStateCounts(StateCounts{});
  OnAgentsChanged({});
}

absl::StatusOr<std::unique_ptr<PrometheusExporter>> PrometheusExporter::Start(
    const ExporterOptions& options, Clock& clock) {
  std::unique_ptr<PrometheusExporter> e(new PrometheusExporter(options, clock));
  if (options.listen.empty()) return e;
  try {
    // One serving thread is plenty for a scrape every few seconds.
    e->exposer_ = std::make_unique<prometheus::Exposer>(options.listen, 1);
  } catch (const std::exception& ex) {
    return absl::UnavailableError(
        absl::StrCat("metrics: cannot listen on '", options.listen, "': ", ex.what()));
  }
  e->exposer_->RegisterCollectable(e->registry_);
  e->exposer_->RegisterCollectable(e->run_latency_);
  std::vector<int> ports = e->exposer_->GetListeningPorts();
  e->port_ = ports.empty() ? 0 : ports.front();
  return e;
}

PrometheusExporter::~PrometheusExporter() {
  exposer_.reset();  // stop serving before the registry and families go away
}

std::string PrometheusExporter::Scrape() const {
  std::vector<prometheus::MetricFamily> families = registry_->Collect();
  for (prometheus::MetricFamily& f : run_latency_->Collect()) families.push_back(std::move(f));
  return prometheus::TextSerializer().Serialize(families);
}

PrometheusExporter::RunSeries& PrometheusExporter::SeriesFor(const v1::Run& run,
                                                             const v1::CellSpec& cell) {
  prometheus::Labels labels = RunLabels(run, cell);
  auto it = runs_by_id_.find(run.id());
  if (it != runs_by_id_.end()) {
    if (it->second.attempt == run.attempt() && it->second.labels == labels) return it->second;
    // A new attempt (maybe elsewhere): its counters start again from zero.
    RemoveAll(it->second);
    runs_by_id_.erase(it);
  }
  RunSeries& s = runs_by_id_[run.id()];
  s.labels = labels;
  s.attempt = run.attempt();
  s.iops = &run_iops_.Add(labels);
  s.bandwidth = &run_bandwidth_.Add(labels);
  for (int d = 0; d < 2; ++d) {
    s.ios[d] = &run_ios_.Add(With(labels, "direction", kDirections[d]));
    s.bytes[d] = &run_bytes_.Add(With(labels, "direction", kDirections[d]));
  }
  return s;
}

void PrometheusExporter::RemoveGauges(RunSeries& s) {
  if (s.iops == nullptr) return;  // already removed
  run_iops_.Remove(s.iops);
  run_bandwidth_.Remove(s.bandwidth);
  run_latency_->Remove(s.labels);
  s.iops = nullptr;
  s.bandwidth = nullptr;
}

void PrometheusExporter::RemoveAll(RunSeries& s) {
  RemoveGauges(s);
  for (int d = 0; d < 2; ++d) {
    if (s.ios[d] != nullptr) run_ios_.Remove(s.ios[d]);
    if (s.bytes[d] != nullptr) run_bytes_.Remove(s.bytes[d]);
    s.ios[d] = nullptr;
    s.bytes[d] = nullptr;
  }
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

  const v1::IoCounters& io = sample.io();
  s.ios[0]->Increment(static_cast<double>(io.read_ios()));
  s.ios[1]->Increment(static_cast<double>(io.write_ios()));
  s.bytes[0]->Increment(static_cast<double>(io.read_bytes()));
  s.bytes[1]->Increment(static_cast<double>(io.write_bytes()));
  if (sample.interval_ns() > 0) {
    const double seconds = static_cast<double>(sample.interval_ns()) / kNsPerSecond;
    s.iops->Set(static_cast<double>(io.read_ios() + io.write_ios()) / seconds);
    s.bandwidth->Set(static_cast<double>(io.read_bytes() + io.write_bytes()) / seconds);
  }
  // Quantiles of this interval's delta histogram: the same numbers `blkbench` shows,
  // never an average of percentiles.
  auto hist = LatencyHistogram::FromProto(sample.lat());
  std::vector<double> values;
  for (const Quantile& q : kQuantiles) {
    values.push_back(hist.ok() && hist->count() > 0
                         ? static_cast<double>(hist->Percentile(q.percentile)) / kNsPerSecond
                         : std::numeric_limits<double>::quiet_NaN());
  }
  if (hist.ok()) {
    run_latency_->Update(s.labels, values, hist->count(), sample.lat().sum_ns() / kNsPerSecond);
  } else {
    run_latency_->Update(s.labels, values, 0, 0.0);  // a malformed histogram counts nothing
  }
}

void PrometheusExporter::OnRunFinished(const v1::Run& run) {
  absl::MutexLock lock(&mu_);
  auto it = runs_by_id_.find(run.id());
  if (it == runs_by_id_.end() || it->second.finished_ms >= 0) return;
  it->second.finished_ms = clock_.MonotonicMs();
  RemoveGauges(it->second);
}

void PrometheusExporter::Sweep() {
  absl::MutexLock lock(&mu_);
  const int64_t now = clock_.MonotonicMs();
  for (auto it = runs_by_id_.begin(); it != runs_by_id_.end();) {
    RunSeries& s = it->second;
    const bool expired = s.finished_ms >= 0 ? now - s.finished_ms >= options_.finished_grace_ms
                                            : now - s.last_sample_ms >= options_.idle_timeout_ms;
    if (expired) {
      RemoveAll(s);
      it = runs_by_id_.erase(it);
    } else {
      ++it;
    }
  }
}

size_t PrometheusExporter::TrackedRuns() const {
  absl::MutexLock lock(&mu_);
  return runs_by_id_.size();
}

void PrometheusExporter::OnAgentsChanged(const std::vector<v1::AgentInfo>& agents) {
  absl::MutexLock lock(&mu_);
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
