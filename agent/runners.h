// The agent's runner choice: io_uring/psync executor for real devices; the scheduler
// engine for "sim:" device classes.
#ifndef BLKBENCH_AGENT_RUNNERS_H_
#define BLKBENCH_AGENT_RUNNERS_H_

#include "absl/status/status.h"
#include "agent/run_executor.h"

namespace blkbench {

RunnerFactory DefaultRunnerFactory();

// The engine can run simulated devices only with its machine profiles: OK when the
// default profile loads, else the error (naming where it looked), so an agent installed
// without them offers no sim: classes instead of failing every sim run.
absl::Status CheckSimulatedDevicesRunnable();

}  // namespace blkbench

#endif  // BLKBENCH_AGENT_RUNNERS_H_
