// `blkbench import`: a fio job file or a pasted fio command line → a matrix on stdout
// (workloads/fio_import.h), with what the user must confirm on stderr.
//   blkbench import job.fio [--device-class CLASS] [--kernel GLOB] [--lossy] [-o FILE]
//   blkbench import [--device-class CLASS] -- fio --name=x --rw=randwrite ...
#ifndef BLKBENCH_CLI_IMPORT_CMD_H_
#define BLKBENCH_CLI_IMPORT_CMD_H_

#include <ostream>

#include "cli/cli_common.h"

namespace blkbench {

// 0 with the matrix on `out` (or in --output); every option not carried over on `err`,
// each with its place in the fio input. 1 when the input cannot be read or imported, when
// something lost changes the workload and --lossy is not given (nothing written), or when
// the matrix written does not validate (errors placed in the matrix, named by --output).
int CmdImport(const Args& a, Client*, std::ostream& out, std::ostream& err);

}  // namespace blkbench

#endif  // BLKBENCH_CLI_IMPORT_CMD_H_
