// blktrace-style text export: one line per event in blkparse's default format,
// "%D %2c %8s %5T.%9t %5p %2a %3d " followed by "%S + %n [%C]" (or "[error]" for C).
#ifndef BLKBENCH_ENGINE_MODEL_BLKTRACE_H_
#define BLKBENCH_ENGINE_MODEL_BLKTRACE_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "engine/sim/time.h"

namespace blkbench::engine {

struct BlktraceEvent {
  int major = 8;  // 8 = sd, 259 = nvme (blkext), 252 = nullb here
  int minor = 0;
  int cpu = 0;
  uint64_t seq = 0;  // per-CPU sequence number, from 1
  SimTime time_ns = 0;
  int pid = 0;
  char action = 'D';      // Q, G, I, D, C, ...
  std::string_view rwbs;  // "R", "WS", ...
  uint64_t sector = 0;
  uint32_t sectors = 0;
  std::string_view tail;  // the process name for D, the error ("0") for C
};

// E.g. "  8,0    3       12     0.000123456  1234  D   R 2048 + 8 [fio]" (no newline).
std::string BlktraceLine(const BlktraceEvent& e);

}  // namespace blkbench::engine

#endif  // BLKBENCH_ENGINE_MODEL_BLKTRACE_H_
