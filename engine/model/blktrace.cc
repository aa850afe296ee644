// blkparse's default output format (blktrace's blkparse_fmt.c).
#include "engine/model/blktrace.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>

namespace blkbench::engine {

std::string BlktraceLine(const BlktraceEvent& e) {
  const std::string rwbs(e.rwbs);
  const std::string tail(e.tail);
  char buf[256];
  const int n = std::snprintf(
      buf, sizeof(buf),
      "%3d,%-3d %2d %8" PRIu64 " %5" PRIu64 ".%09" PRIu64 " %5d %2c %3s %" PRIu64 " + %u [%s]",
      e.major, e.minor, e.cpu, e.seq, e.time_ns / 1'000'000'000, e.time_ns % 1'000'000'000, e.pid,
      e.action, rwbs.c_str(), e.sector, e.sectors, tail.c_str());
  return std::string(buf, n > 0 ? std::min<size_t>(static_cast<size_t>(n), sizeof(buf) - 1) : 0);
}

}  // namespace blkbench::engine
