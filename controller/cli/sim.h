// `blkbench sim`: a matrix run on the scheduler engine in-process, no daemons.
#ifndef BLKBENCH_CONTROLLER_CLI_SIM_H_
#define BLKBENCH_CONTROLLER_CLI_SIM_H_

#include <ostream>
#include <string>

namespace blkbench {

// Runs every cell x repeat of the matrix at `path` (all cells must have sim: device
// classes), printing progress and then the results in `format` (table, csv, json).
// With a non-empty db_path the experiment is also stored there (controller schema); with
// a non-empty trace_path every run's D/C events are written there, blkparse-style.
// Returns 0 when every run succeeded, 1 otherwise.
int RunSim(const std::string& path, const std::string& db_path, const std::string& trace_path,
           const std::string& format, std::ostream& out, std::ostream& err);

}  // namespace blkbench

#endif  // BLKBENCH_CONTROLLER_CLI_SIM_H_
