// iostat -x over one sample interval; see disk_interval.h.
#include "common/disk_interval.h"

#include <algorithm>

namespace blkbench {

DiskIntervalStats IntervalStats(const v1::DiskStatsInterval& d, double seconds) {
  DiskIntervalStats s;
  auto pct = [](uint64_t merged, uint64_t done) {
    return merged + done == 0 ? 0.0 : 100.0 * merged / static_cast<double>(merged + done);
  };
  s.rrqm_pct = pct(d.reads_merged(), d.reads());
  s.wrqm_pct = pct(d.writes_merged(), d.writes());
  s.r_await_ms = d.reads() == 0 ? 0 : static_cast<double>(d.read_ms()) / d.reads();
  s.w_await_ms = d.writes() == 0 ? 0 : static_cast<double>(d.write_ms()) / d.writes();
  if (d.elapsed_ns() > 0) seconds = static_cast<double>(d.elapsed_ns()) / 1e9;
  if (seconds <= 0) return s;
  s.util_pct = std::min(100.0, d.io_ms() / (seconds * 10.0));
  s.aqu_sz = d.weighted_io_ms() / (seconds * 1000.0);
  s.r_per_s = d.reads() / seconds;
  s.w_per_s = d.writes() / seconds;
  return s;
}

}  // namespace blkbench
