// `blkbench sim`: a matrix run on the scheduler engine in-process, no daemons.
#ifndef BLKBENCH_CLI_SIM_H_
#define BLKBENCH_CLI_SIM_H_

#include <ostream>

#include "cli/local_session.h"

namespace blkbench {

// Runs every cell x repeat of options.matrix (all cells must have sim: device classes)
// in a LocalSession, printing a progress line per run on `err` (unless quiet) and only
// the results, in options.format, on `out`. Messages say "blkbench sim" unless
// options.command names another command. Returns 0 when every run succeeded (and was
// stored), 1 otherwise.
int RunSim(const SessionOptions& options, std::ostream& out, std::ostream& err);

}  // namespace blkbench

#endif  // BLKBENCH_CLI_SIM_H_
