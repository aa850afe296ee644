// `blkbench run FILE --device PATH...`: a matrix on this machine's own devices with no
// daemons — the agent's run executor (allowlist, wrong-disk checks, exclusive hold,
// journaled queue settings and cgroups, restore) inside the `blkbench sim` loop, results
// in a local store that `results`, `report`, `gate` and `history` read with --db.
// `blkbench run FILE --vm KIND[:SPEC] --kernel SPEC...`: the same on the devices of
// guests booted for the run (one per kernel; cli/run_vm.h), powered off at its end.
#ifndef BLKBENCH_CLI_RUN_CMD_H_
#define BLKBENCH_CLI_RUN_CMD_H_

#include <ostream>
#include <string>
#include <vector>

#include "cli/cli_common.h"
#include "cli/local_session.h"
#include "cli/run_vm.h"

namespace blkbench {

// Where a local run keeps its journal of original settings, and where its cgroups go
// (beside, never inside, an agent's /var/lib/blkbench-agent and `blkbench`).
inline constexpr char kDefaultRunStateDir[] = "/var/lib/blkbench-run";
inline constexpr char kDefaultRunDb[] = "blkbench.db";
inline constexpr char kRunCgroupParent[] = "blkbench-run";

struct RunOptions {
  // The matrix, the store (kDefaultRunDb from the command line), --trace, the output.
  // session.trace_path: every run's block events as blkparse text, "# run ..." before
  // each run's; implies trace: 1 for every cell (stored so), as asking for a trace on a
  // real device means tracing it. Messages say "blkbench run" unless session.command
  // names another command (calibrate's own).
  SessionOptions session = {};
  std::vector<std::string> devices = {};  // --device PATH or PATH=CLASS, in order
  RunVmFlags vm = {};                     // --vm, --kernel, --vcpus, --memory (instead of devices)
  std::string state_dir = kDefaultRunStateDir;
};

// The options of `blkbench run FILE` as parsed in `a` (REQUIRES: CheckMatrix passed).
RunOptions RunOptionsFromArgs(const Args& a);

// Runs the matrix on the devices. Before anything is stored or written: every device
// must be readable and pass the agent's wrong-disk checks (not mounted, no holders or
// partitions, no signature, not swap), and every cell must match a device (class as
// detected, or as given with PATH=CLASS, and the host's kernel); otherwise it says why
// and returns 1 with nothing written. SIGINT/SIGTERM cancel the running run (its device
// is restored) and the rest. 0 when every run succeeded and was stored, 1 otherwise;
// 2 for bad flags.
//
// With options.vm instead of devices: bad flags are 2 and a cell whose class no --vm
// device is offered as is 1, both before anything boots; then the guests boot (a guest
// that does not is 1), the matrix takes a kernel axis over two or more guests
// (WithKernelAxis), each cell must match a guest's device by class and release, and the
// runs go into the guests. Every guest is powered off and its files removed before it
// returns, whatever happened (Ctrl-C during a boot aborts the boot).
int RunOnDevices(const RunOptions& options, std::ostream& out, std::ostream& err);

}  // namespace blkbench

#endif  // BLKBENCH_CLI_RUN_CMD_H_
