// Results API handlers; see results_api.h.
#include "controller/results_api.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/metrics/result_rows.h"
#include "common/metrics/run_labels.h"
#include "common/states.h"
#include "workloads/format.h"

namespace blkbench {
namespace {

constexpr char kJson[] = "application/json";

HttpResponse Error(int status, const std::string& message) {
  return {status, kJson, absl::StrCat("{\"error\": ", JsonQuote(message), "}\n")};
}

}  // namespace

HttpResponse ExperimentsJson(Controller& controller, const HttpRequest& req) {
  uint32_t limit = 100;
  auto it = req.params.find("limit");
  if (it != req.params.end() && !absl::SimpleAtoi(it->second, &limit)) {
    return Error(400, "limit: expected a number");
  }
  auto exps = controller.ListExperiments(limit);
  if (!exps.ok()) return Error(503, std::string(exps.status().message()));
  std::string out = "[";
  for (size_t i = 0; i < exps->size(); ++i) {
    const v1::Experiment& e = (*exps)[i];
    // The list omits cells and runs; counting them needs the experiment itself.
    auto full = controller.GetExperiment(e.id(), false);
    absl::StrAppend(&out, i ? ",\n " : "\n ", "{\"id\": ", e.id(),
                    ", \"name\": ", JsonQuote(e.name()),
                    ", \"state\": ", JsonQuote(ExperimentStateName(e.state())),
                    ", \"created_unix_ms\": ", e.created_unix_ms(),
                    ", \"finished_unix_ms\": ", e.finished_unix_ms(),
                    ", \"cells\": ", full.ok() ? full->cells_size() : 0,
                    ", \"runs\": ", full.ok() ? full->runs_size() : 0, "}");
  }
  absl::StrAppend(&out, exps->empty() ? "]\n" : "\n]\n");
  return {200, kJson, out};
}

HttpResponse ResultsJson(Controller& controller, const HttpRequest& req) {
  auto it = req.params.find("experiment");
  if (it == req.params.end() || it->second.empty()) {
    return Error(400, "experiment: required (an id, or 'latest')");
  }
  uint64_t id = 0;
  if (it->second == "latest") {
    auto newest = controller.ListExperiments(1);
    if (!newest.ok()) return Error(503, std::string(newest.status().message()));
    if (newest->empty()) return {200, kJson, "[]\n"};
    id = newest->front().id();
  } else if (!absl::SimpleAtoi(it->second, &id)) {
    return Error(400,
                 absl::StrCat("experiment: expected an id or 'latest', got '", it->second, "'"));
  }
  auto exp = controller.GetExperiment(id, /*with_results=*/true);
  if (absl::IsNotFound(exp.status())) return Error(404, std::string(exp.status().message()));
  if (!exp.ok()) return Error(503, std::string(exp.status().message()));
  const auto kernel = req.params.find("kernel");
  const auto cell = req.params.find("cell");
  std::vector<ResultRow> rows;
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
    rows.push_back(MakeResultRow(exp->id(), exp->name(), c, run));
  }
  return {200, kJson, ResultRowsJson(rows)};
}

}  // namespace blkbench
