// `blkbench sim`: a matrix run on the scheduler engine in-process, no daemons.
#ifndef BLKBENCH_CLI_SIM_H_
#define BLKBENCH_CLI_SIM_H_

#include <functional>
#include <memory>
#include <ostream>
#include <string>

#include "blkbench/v1/controller.pb.h"
#include "workloads/matrix.h"

namespace blkbench {

struct SimOptions {
  std::string path;              // the matrix file
  std::string db_path;           // non-empty: also store the experiment there (controller schema)
  std::string trace_path;        // non-empty: every run's D/C events, blkparse-style
  std::string format = "table";  // table, csv, json, fio-json, fio-json+
  std::string report_path;       // non-empty: the experiment's HTML report (cli/report.h)
  bool quiet = false;            // no progress lines on stderr
  // The matrix of `path` already parsed (the CLI's check did it); null: parse `path`.
  std::shared_ptr<const workloads::Matrix> matrix;
  std::string matrix_text;  // the file's text, for the report ("" = not shown)
  // As LocalRunOptions::on_results: every run's row once all have run.
  std::function<void(const v1::GetResultsResponse&)> on_results = nullptr;
};

// Runs every cell x repeat of the matrix (all cells must have sim: device classes),
// printing a progress line per run on `err` (unless quiet) and only the results, in
// `format`, on `out`. Returns 0 when every run succeeded (and was stored), 1 otherwise.
int RunSim(const SimOptions& options, std::ostream& out, std::ostream& err);

}  // namespace blkbench

#endif  // BLKBENCH_CLI_SIM_H_
