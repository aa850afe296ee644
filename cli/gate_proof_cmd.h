// `blkbench gate-proof`: measures the gate's false-alarm rate and power on synthetic
// repeats and on engine runs with a known injected slowdown, and writes the tables into
// docs/gating.md (between its gate-proof markers).
#ifndef BLKBENCH_CLI_GATE_PROOF_CMD_H_
#define BLKBENCH_CLI_GATE_PROOF_CMD_H_

#include <ostream>

#include "cli/cli_common.h"

namespace blkbench {

// Flags: --write FILE (replace the section between "<!-- gate-proof:begin -->" and
// "<!-- gate-proof:end -->"), --trials N (simulated experiments of 20 cells per synthetic
// entry, default 500), --quick (100 trials, smaller engine pools; for tests).
// Prints the Markdown section. Deterministic: every draw is seeded. 0 on success.
int RunGateProof(const Args& a, std::ostream& out, std::ostream& err);

}  // namespace blkbench

#endif  // BLKBENCH_CLI_GATE_PROOF_CMD_H_
