// The daemon-less experiment loop behind `blkbench sim` and `blkbench run`: every run of
// a matrix in the store's order, one at a time in this process, each stored (with --db)
// as the controller stores an agent's runs, with progress on stderr and only the results
// on stdout. What runs a run — the engine on a sim: device, the agent's run executor on
// a local device — is the caller's.
#ifndef BLKBENCH_CLI_LOCAL_RUN_H_
#define BLKBENCH_CLI_LOCAL_RUN_H_

#include <atomic>
#include <functional>
#include <memory>
#include <ostream>
#include <string>

#include "absl/status/statusor.h"
#include "blkbench/v1/controller.pb.h"
#include "workloads/matrix.h"

namespace blkbench {

struct LocalRunOptions {
  std::string command;           // "sim" or "run", for messages ("blkbench sim: ...")
  std::string path;              // the matrix file
  std::string db_path;           // non-empty: store the experiment there (OpenStore)
  std::string trace_path;        // non-empty: the runner's D/C events, blkparse-style
  std::string format = "table";  // table, csv, json, fio-json, fio-json+
  std::string report_path;       // non-empty: the experiment's HTML report
  bool quiet = false;            // no progress lines on stderr
  std::shared_ptr<const workloads::Matrix> matrix;  // parsed; never null
  std::string matrix_text;                          // the file's text ("" = not shown)
  // Set by another thread (a signal): the running run stops (Cancelled), the rest are
  // stored canceled without running. May be null.
  const std::atomic<bool>* cancel = nullptr;
  // Called with every run's row (failed and canceled ones included) once all have run,
  // before the results are printed, for a caller that goes on from them. May be null.
  std::function<void(const v1::GetResultsResponse&)> on_results = nullptr;
};

// One run, as the loop hands it to its runner.
struct LocalRun {
  const v1::Run& run;  // id, repeat; device_path as placed
  const v1::CellSpec& cell;
  std::function<void(const v1::Sample&)> on_sample;
  std::ostream* trace = nullptr;  // as RunContext::trace; null without --trace
};

struct LocalRunner {
  // Where a run of `cell` goes (Run.device_path): a sim: class, a device path.
  std::function<std::string(const v1::CellSpec& cell, uint64_t run_id)> place;
  // Runs it to its end: the result, or why not (Cancelled when `cancel` was set).
  std::function<absl::StatusOr<v1::RunResult>(const LocalRun& run)> execute;
  // Tables printed after the results table (format table only), e.g. engine internals.
  std::function<void(const v1::GetResultsResponse& results, std::ostream& out)> extra_tables;
};

// Runs every cell x repeat of options.matrix with `runner`, printing a progress line per
// run on `err` (unless quiet) and the results, in options.format, on `out`. Returns 0
// when every run succeeded (and was stored), 1 otherwise (a cancel included).
int RunLocalExperiment(const LocalRunOptions& options, const LocalRunner& runner, std::ostream& out,
                       std::ostream& err);

}  // namespace blkbench

#endif  // BLKBENCH_CLI_LOCAL_RUN_H_
