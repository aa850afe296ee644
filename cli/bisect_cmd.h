// `blkbench bisect FILE --kernels K1,...,Kn`: the first kernel of an ordered list whose
// first is good and last is bad where the matrix's metric regresses (cli/bisect.h's
// search). Each step is a daemon-less experiment in --db: on the engine for sim: kernels,
// in a qemu guest (`blkbench run --vm`'s path) for deb: packages and built images. A step
// already in --db (same matrix, same kernel, ended done) is reused, so a bisect that was
// stopped goes on where it was. With --git DIR --good REV --bad REV --build HOOK the
// kernels are the revisions from good to bad, each turned into a kernel by the site's
// build hook when a step needs it (docs/bisect.md).
#ifndef BLKBENCH_CLI_BISECT_CMD_H_
#define BLKBENCH_CLI_BISECT_CMD_H_

#include <ostream>

#include "cli/cli_common.h"

namespace blkbench {

// Exit codes: 0 the first bad kernel found, 1 no regression between the ends, 2
// inconclusive, 3 could not run (bad arguments, a step whose runs failed, a build hook
// that failed, a store that cannot be written).
inline constexpr int kBisectCouldNotRun = 3;

// Checks the flags and the matrix (loaded into `a`) without running anything.
int CheckBisect(Args& a, std::ostream& err);
int CmdBisect(const Args& a, std::ostream& out, std::ostream& err);

}  // namespace blkbench

#endif  // BLKBENCH_CLI_BISECT_CMD_H_
