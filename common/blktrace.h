// blktrace-style text export, shared by the engine (engine/model/tracer.h) and the agent's
// tracefs reader (agent/device/block_trace.h): one line per event in blkparse's default
// format, "%D %2c %8s %5T.%9t %5p %2a %3d " followed by "%S + %n [%C]" ("%S / %d [%C]" for
// a split, X; the error, "[0]", for C). blktrace's blkparse_fmt.c.
#ifndef BLKBENCH_COMMON_BLKTRACE_H_
#define BLKBENCH_COMMON_BLKTRACE_H_

#include <cstdint>
#include <string>
#include <string_view>

namespace blkbench {

struct BlktraceEvent {
  int major = 8;  // 8 = sd, 259 = nvme (blkext), 252 = nullb here, 7 = loop
  int minor = 0;
  int cpu = 0;
  uint64_t seq = 0;      // per-CPU sequence number, from 1
  uint64_t time_ns = 0;  // since the trace started
  int pid = 0;
  char action = 'D';      // Q, G, I, D, C, M, F, X, R
  std::string_view rwbs;  // "R", "WS", ...
  uint64_t sector = 0;
  uint32_t sectors = 0;
  uint64_t split_at = 0;  // X only: the sector where the bio was cut
  std::string_view tail;  // the process name for Q/G/I/D, the error ("0") for C
};

// E.g. "  8,0    3       12     0.000123456  1234  D   R 2048 + 8 [fio]" (no newline).
std::string BlktraceLine(const BlktraceEvent& e);

// The blkparse action letter of a block tracepoint ("block_rq_issue" → 'D'), or 0 for one
// blkparse has no letter for here (block_rq_merge, block_plug, ...).
char BlktraceAction(std::string_view tracepoint);

}  // namespace blkbench

#endif  // BLKBENCH_COMMON_BLKTRACE_H_
