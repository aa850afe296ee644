// `blkbench history`: one metric of one cell across experiments, with change points.
#ifndef BLKBENCH_CLI_HISTORY_CMD_H_
#define BLKBENCH_CLI_HISTORY_CMD_H_

#include <ostream>

#include "cli/cli_common.h"

namespace blkbench {

// Checks the flags without the controller; prints usage and returns false if bad.
bool HistoryArgsOk(const Args& a, std::ostream& err);
// Prints the history (table or JSON). 0 on success; the client's codes otherwise.
int CmdHistory(Client& c, const Args& a, std::ostream& out, std::ostream& err);

}  // namespace blkbench

#endif  // BLKBENCH_CLI_HISTORY_CMD_H_
