// blkparse's default output format (blktrace's blkparse_fmt.c).
#include "common/blktrace.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>

namespace blkbench {

std::string BlktraceLine(const BlktraceEvent& e) {
  char range[64];
  if (e.action == 'X') {
    std::snprintf(range, sizeof(range), "%" PRIu64 " / %" PRIu64, e.sector, e.split_at);
  } else {
    std::snprintf(range, sizeof(range), "%" PRIu64 " + %u", e.sector, e.sectors);
  }
  char buf[256];
  const int n =
      std::snprintf(buf, sizeof(buf),
                    "%3d,%-3d %2d %8" PRIu64 " %5" PRIu64 ".%09" PRIu64 " %5d %2c %3.*s %s [%.*s]",
                    e.major, e.minor, e.cpu, e.seq, e.time_ns / 1'000'000'000,
                    e.time_ns % 1'000'000'000, e.pid, e.action, static_cast<int>(e.rwbs.size()),
                    e.rwbs.data(), range, static_cast<int>(e.tail.size()), e.tail.data());
  return std::string(buf, n > 0 ? std::min<size_t>(static_cast<size_t>(n), sizeof(buf) - 1) : 0);
}

char BlktraceAction(std::string_view tracepoint) {
  // include/trace/events/block.h against blktrace's act_to_str (blkparse.c).
  struct Pair {
    std::string_view event;
    char action;
  };
  static constexpr Pair kActions[] = {
      {"block_bio_queue", 'Q'},      {"block_getrq", 'G'},       {"block_rq_insert", 'I'},
      {"block_rq_issue", 'D'},       {"block_rq_complete", 'C'}, {"block_bio_backmerge", 'M'},
      {"block_bio_frontmerge", 'F'}, {"block_split", 'X'},       {"block_rq_requeue", 'R'},
  };
  for (const Pair& p : kActions) {
    if (p.event == tracepoint) return p.action;
  }
  return 0;
}

}  // namespace blkbench
