// `blkbench import`: a fio job file or a pasted fio command line → a matrix on stdout
// (workloads/fio_import.h), with what the user must confirm on stderr.
//   blkbench import job.fio [--device-class CLASS] [--kernel GLOB]
//   blkbench import [--device-class CLASS] -- fio --name=x --rw=randwrite ...
#ifndef BLKBENCH_CLI_IMPORT_CMD_H_
#define BLKBENCH_CLI_IMPORT_CMD_H_

#include <ostream>

#include "cli/cli_common.h"

namespace blkbench {

// 0 with the matrix on `out`; 1 when the input cannot be read or imported, or the matrix
// written does not validate (why on `err`).
int CmdImport(const Args& a, Client*, std::ostream& out, std::ostream& err);

}  // namespace blkbench

#endif  // BLKBENCH_CLI_IMPORT_CMD_H_
