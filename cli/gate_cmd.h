// `blkbench gate`: the regression gate on the command line; see gate_cmd.cc.
#ifndef BLKBENCH_CLI_GATE_CMD_H_
#define BLKBENCH_CLI_GATE_CMD_H_

#include <ostream>

#include "cli/cli_common.h"

namespace blkbench {

// The gate's exit codes: 0 no regression, 1 regression, 2 inconclusive (gate::ExitStatus),
// and this one when it could not decide at all: bad arguments, controller unreachable,
// an experiment missing or failing to end, a report that cannot be written.
inline constexpr int kGateCouldNotRun = 3;

// Checks the gate's flags without the controller; prints usage and returns false if bad.
bool GateArgsOk(const Args& a, std::ostream& err);
// Runs the gate; returns one of the exit codes above.
int CmdGate(Client& c, const Args& a, std::ostream& out, std::ostream& err);

}  // namespace blkbench

#endif  // BLKBENCH_CLI_GATE_CMD_H_
