// Results API handlers; see results_api.h.
#include "controller/metrics/results_api.h"

#include <cmath>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/metrics/run_labels.h"
#include "common/states.h"
#include "workloads/format.h"

namespace blkbench {
namespace {

constexpr char kJson[] = "application/json";

HttpResponse Error(int status, const std::string& message) {
  return {status, kJson, absl::StrCat("{\"error\": ", JsonQuote(message), "}\n")};
}

std::string Number(double v) {
  if (!std::isfinite(v)) return "null";
  return absl::StrCat(v);
}

std::string StateName(v1::ExperimentState s) {
  std::string name = v1::ExperimentState_Name(s);
  if (name.rfind("EXPERIMENT_", 0) == 0) name = name.substr(11);
  for (char& c : name) c = static_cast<char>(tolower(c));
  return name;
}

std::string ResultRow(const v1::Experiment& exp, const v1::Run& run) {
  const v1::CellSpec& cell = exp.cells(static_cast<int>(run.cell_index()));
  const v1::RunResult& r = run.result();
  const KernelLabels k = KernelOf(cell, r.host().kernel_release());
  const v1::LatencySummary& lat = r.lat_summary();
  std::string out = absl::StrCat(
      "{\"experiment\": ", exp.id(), ", \"experiment_name\": ", JsonQuote(exp.name()),
      ", \"run\": ", run.id(), ", \"cell_index\": ", run.cell_index(),
      ", \"cell\": ", JsonQuote(workloads::CellLabel(cell)),
      ", \"cell_without_kernel\": ", JsonQuote(CellLabelWithout(cell, "kernel")),
      ", \"repeat\": ", run.repeat(), ", \"attempt\": ", run.attempt(),
      ", \"agent\": ", JsonQuote(run.agent_id()), ", \"host\": ", JsonQuote(r.host().hostname()),
      ", \"kernel\": ", JsonQuote(k.kernel), ", \"profile\": ", JsonQuote(k.profile),
      ", \"patches\": ", JsonQuote(k.patches), ", \"device\": ", JsonQuote(run.device_path()),
      ", \"device_class\": ", JsonQuote(cell.target().device_class()),
      ", \"scheduler\": ", JsonQuote(SchedulerOf(cell)), ", \"runner\": ", JsonQuote(r.runner()));
  absl::StrAppend(&out, ", \"iops\": ", Number(r.iops()),
                  ", \"bandwidth_bytes_per_second\": ", Number(r.bw_bytes_per_sec()),
                  ", \"latency_mean_seconds\": ", Number(lat.mean_ns() / 1e9),
                  ", \"latency_p50_seconds\": ", Number(static_cast<double>(lat.p50_ns()) / 1e9),
                  ", \"latency_p99_seconds\": ", Number(static_cast<double>(lat.p99_ns()) / 1e9),
                  ", \"latency_p999_seconds\": ", Number(static_cast<double>(lat.p999_ns()) / 1e9),
                  ", \"latency_max_seconds\": ", Number(static_cast<double>(lat.max_ns()) / 1e9),
                  ", \"usr_cpu_seconds\": ", Number(static_cast<double>(r.usr_cpu_ns()) / 1e9),
                  ", \"sys_cpu_seconds\": ", Number(static_cast<double>(r.sys_cpu_ns()) / 1e9),
                  ", \"duration_seconds\": ", Number(static_cast<double>(r.duration_ns()) / 1e9),
                  ", \"finished_unix_ms\": ", run.finished_unix_ms(), ", \"internals\": {");
  // Map order is unspecified in protobuf: sort keys for stable output.
  std::map<std::string, double> internals(r.internals().begin(), r.internals().end());
  bool first = true;
  for (const auto& [key, value] : internals) {
    absl::StrAppend(&out, first ? "" : ", ", JsonQuote(key), ": ", Number(value));
    first = false;
  }
  absl::StrAppend(&out, "}}");
  return out;
}

}  // namespace

HttpResponse ExperimentsJson(Store& store, const HttpRequest& req) {
  uint32_t limit = 100;
  auto it = req.params.find("limit");
  if (it != req.params.end() && !absl::SimpleAtoi(it->second, &limit)) {
    return Error(400, "limit: expected a number");
  }
  auto exps = store.ListExperiments(limit);
  if (!exps.ok()) return Error(503, std::string(exps.status().message()));
  std::string out = "[";
  for (size_t i = 0; i < exps->size(); ++i) {
    const v1::Experiment& e = (*exps)[i];
    // The list omits cells and runs; counting them needs the experiment itself.
    auto full = store.GetExperiment(e.id(), false);
    absl::StrAppend(&out, i ? ",\n " : "\n ", "{\"id\": ", e.id(),
                    ", \"name\": ", JsonQuote(e.name()),
                    ", \"state\": ", JsonQuote(StateName(e.state())),
                    ", \"created_unix_ms\": ", e.created_unix_ms(),
                    ", \"finished_unix_ms\": ", e.finished_unix_ms(),
                    ", \"cells\": ", full.ok() ? full->cells_size() : 0,
                    ", \"runs\": ", full.ok() ? full->runs_size() : 0, "}");
  }
  absl::StrAppend(&out, exps->empty() ? "]\n" : "\n]\n");
  return {200, kJson, out};
}

HttpResponse ResultsJson(Store& store, const HttpRequest& req) {
  auto it = req.params.find("experiment");
  if (it == req.params.end() || it->second.empty()) {
    return Error(400, "experiment: required (an id, or 'latest')");
  }
  uint64_t id = 0;
  if (it->second == "latest") {
    auto newest = store.ListExperiments(1);
    if (!newest.ok()) return Error(503, std::string(newest.status().message()));
    if (newest->empty()) return {200, kJson, "[]\n"};
    id = newest->front().id();
  } else if (!absl::SimpleAtoi(it->second, &id)) {
    return Error(400,
                 absl::StrCat("experiment: expected an id or 'latest', got '", it->second, "'"));
  }
  auto exp = store.GetExperiment(id, /*with_results=*/true);
  if (absl::IsNotFound(exp.status())) return Error(404, std::string(exp.status().message()));
  if (!exp.ok()) return Error(503, std::string(exp.status().message()));
  const auto kernel = req.params.find("kernel");
  const auto cell = req.params.find("cell");
  std::string out = "[";
  bool first = true;
  for (const v1::Run& run : exp->runs()) {
    if (run.state() != v1::RUN_DONE || !run.has_result() ||
        run.cell_index() >= static_cast<uint32_t>(exp->cells_size())) {
      continue;
    }
    const v1::CellSpec& c = exp->cells(static_cast<int>(run.cell_index()));
    if (kernel != req.params.end() && !kernel->second.empty() &&
        KernelOf(c, run.result().host().kernel_release()).kernel != kernel->second) {
      continue;
    }
    if (cell != req.params.end() && !cell->second.empty() &&
        workloads::CellLabel(c) != cell->second) {
      continue;
    }
    absl::StrAppend(&out, first ? "\n " : ",\n ", ResultRow(*exp, run));
    first = false;
  }
  absl::StrAppend(&out, first ? "]\n" : "\n]\n");
  return {200, kJson, out};
}

}  // namespace blkbench
