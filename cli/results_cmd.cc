// `blkbench results EXP` (tables, CSV, JSON, fio's JSON) and `blkbench report EXP` (the
// HTML page of cli/report.h): an experiment's results, from the controller or --db.
#include <fstream>
#include <string>

#include "cli/command_args.h"
#include "cli/command_registry.h"
#include "cli/fio_logs.h"
#include "cli/format.h"
#include "cli/report.h"

namespace blkbench {
namespace {

// The experiment named by the command's EXP argument, with its samples if asked: 0, or
// the exit code (2 for a bad id, the RPC's failure otherwise).
int FetchResults(const Args& a, Client* c, bool with_samples, v1::GetResultsResponse* resp,
                 std::ostream& err) {
  uint64_t id = 0;
  if (!ParseId(a, &id, err)) return 2;
  grpc::ClientContext ctx;
  c->Deadline(&ctx, 120);
  v1::GetResultsRequest req;
  req.set_experiment_id(id);
  req.set_with_samples(with_samples);
  grpc::Status s = c->stub().GetResults(&ctx, req, resp);
  return s.ok() ? 0 : c->Fail(s);
}

int CmdResults(const Args& a, Client* c, std::ostream& out, std::ostream& err) {
  const std::string format = a.Get("format", "table");
  const bool fio = format == "fio-json" || format == "fio-json+";
  if (!fio && (a.Has("out") || a.Has("per") || a.Has("group_reporting"))) {
    err << "blkbench results: --out, --per and --group_reporting apply to --format fio-json and "
           "fio-json+ only\n";
    return 2;
  }
  // fio's bw_*/iops_* statistics and log files come from the interval samples.
  const std::string logs = a.Get("logs");
  v1::GetResultsResponse resp;
  if (int rc = FetchResults(a, c, a.Has("samples") || fio || !logs.empty(), &resp, err); rc != 0) {
    return rc;
  }
  if (!logs.empty() && WriteFioLogsFlag(resp, logs, "blkbench results", err) != 0) return 1;
  if (fio && !a.Has("samples")) {
    return PrintFioJson(resp, format, a.Get("per", "cell"), a.Get("out", ""), out, err,
                        a.Has("group_reporting"));
  }
  if (a.Has("samples")) {
    out << SampleRecords(resp).Render(format);
  } else {
    PrintResults(resp, format, out);
  }
  return 0;
}

int CmdReport(const Args& a, Client* c, std::ostream& out, std::ostream& err) {
  v1::GetResultsResponse resp;  // with samples: the per-interval plots
  if (int rc = FetchResults(a, c, /*with_samples=*/true, &resp, err); rc != 0) return rc;
  const std::string html = RenderExperimentReport(resp);
  const std::string path = a.Get("html", "");
  if (path.empty()) {
    out << html;
    return 0;
  }
  std::ofstream file(path);
  file << html;
  file.close();
  if (!file) {
    err << "blkbench report: cannot write '" << path << "'\n";
    return 1;
  }
  out << path << "\n";
  return 0;
}

}  // namespace

CommandSpec ResultsCommand() {
  return {
      .name = "results",
      .args = {"EXP"},
      .summary = "per-run results",
      .description =
          "json and csv use the schema of the controller's /api/v1/results (docs/metrics.md): "
          "numbers as numbers in base units, one CSV column per axis (axes.KEY) and per engine "
          "internal (internals.KEY). fio-json is fio 3.33's --output-format=json (fio-json+ "
          "adds clat_ns.bins, as json+), one fio job per cell (per named job of a cell with "
          "jobs:); docs/fio-json.md.",
      .flags =
          {{"format", "FORMAT", "output format", {"table", "csv", "json", "fio-json", "fio-json+"}},
           {"samples", "", "one row per stored sample instead of per run (table, csv, json)"},
           {"per",
            "UNIT",
            "fio-json: one fio job per cell (repeats merged) or per run",
            {"cell", "run"}},
           {"out", "DIR", "fio-json: one fio document per cell (or run) in DIR, not stdout"},
           {"group_reporting", "",
            "fio-json: a cell's named jobs (jobs:) as one fio job, not one per named job"},
           FioLogsFlag(),
           LocalDbFlag()},
      .needs_controller = true,
      .check = CheckId,
      .run = CmdResults};
}

CommandSpec ReportCommand() {
  return {.name = "report",
          .args = {"EXP"},
          .summary = "an experiment as one self-contained HTML page with plots",
          .description =
              "IOPS against each axis, latency percentiles and CDFs from the merged histograms, "
              "per-interval IOPS, per-cgroup shares, and the host, kernel, device and queue "
              "settings of every run; no external resources (docs/report.md).",
          .flags = {{"html", "FILE", "write the page to FILE instead of stdout"}, LocalDbFlag()},
          .needs_controller = true,
          .check = CheckId,
          .run = CmdReport};
}

}  // namespace blkbench
