// One issued I/O as recorded by the executor's test seam (ExecutorOptions::on_trace).
#ifndef BLKBENCH_AGENT_EXECUTOR_IO_TRACE_H_
#define BLKBENCH_AGENT_EXECUTOR_IO_TRACE_H_

#include <cstdint>

namespace blkbench {

struct IoTrace {
  uint64_t offset = 0;  // bytes from the start of the target
  uint32_t len = 0;     // bytes
  uint32_t write = 0;   // 1 for a write, 0 for a read
};

}  // namespace blkbench

#endif  // BLKBENCH_AGENT_EXECUTOR_IO_TRACE_H_
