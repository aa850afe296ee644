// The daemon-less experiment loop behind `blkbench sim` and `blkbench run`: every run of
// a LocalSession in the store's order, one at a time in this process, with a progress
// line per run on stderr and only the results on stdout. What runs a run — the engine on
// a sim: device, the agent's run executor on a local device — is the caller's runner.
#ifndef BLKBENCH_CLI_LOCAL_RUN_H_
#define BLKBENCH_CLI_LOCAL_RUN_H_

#include <atomic>
#include <functional>
#include <ostream>
#include <string>

#include "blkbench/v1/agent.pb.h"
#include "blkbench/v1/controller.pb.h"
#include "cli/local_session.h"

namespace blkbench {

struct LocalRunner {
  // Where a run of `cell` goes (Run.device_path): a sim: class, a device path.
  std::function<std::string(const v1::CellSpec& cell, uint64_t run_id)> place;
  // Runs the assignment to its end and answers as an agent does (RunFinished; CANCELED
  // once `cancel` was set). `on_sample` takes each sample; `trace` is the run's section
  // of the --trace sink (as RunContext::trace), null without --trace.
  std::function<v1::RunFinished(const v1::RunAssignment& assignment,
                                const std::function<void(const v1::Sample&)>& on_sample,
                                std::ostream* trace)>
      execute;
  // Tables printed after the results table (format table only), e.g. engine internals.
  std::function<void(const v1::GetResultsResponse& results, std::ostream& out)> extra_tables;
};

// Runs every cell x repeat of options.matrix with `runner` in a LocalSession, printing a
// progress line per run on `err` (unless quiet) and the results, in options.format, on
// `out`. `cancel` (may be null), set by another thread (a signal), stops the running run
// and ends the rest canceled without running them. Returns 0 when every run succeeded
// (and was stored), 1 otherwise (a cancel included).
int RunLocalExperiment(const SessionOptions& options, const LocalRunner& runner,
                       const std::atomic<bool>* cancel, std::ostream& out, std::ostream& err);

}  // namespace blkbench

#endif  // BLKBENCH_CLI_LOCAL_RUN_H_
