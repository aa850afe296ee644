// The agent's runner choice: io_uring/psync executor for real devices; the scheduler
// engine for "sim:" device classes.
#ifndef BLKBENCH_AGENT_RUNNERS_H_
#define BLKBENCH_AGENT_RUNNERS_H_

#include "agent/run_executor.h"

namespace blkbench {

RunnerFactory DefaultRunnerFactory();

}  // namespace blkbench

#endif  // BLKBENCH_AGENT_RUNNERS_H_
