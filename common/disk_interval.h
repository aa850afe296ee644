// iostat -x over one sample interval from the device's own counter deltas
// (v1::DiskStatsInterval, /proc/diskstats): what the exporters, `blkbench results
// --samples` and the report show per interval, computed in one place.
#ifndef BLKBENCH_COMMON_DISK_INTERVAL_H_
#define BLKBENCH_COMMON_DISK_INTERVAL_H_

#include <cstdint>

#include "blkbench/v1/metrics.pb.h"

namespace blkbench {

// sysstat's rd_stats arithmetic over the interval between the two counter readings:
// d.elapsed_ns when the agent recorded it, else `seconds` (the sample's interval; > 0,
// otherwise every rate is 0).
struct DiskIntervalStats {
  double util_pct = 0;    // io_ms / interval, capped at 100 (a first interval that also
                          // holds ramp_time's I/O may exceed it before the cap)
  double aqu_sz = 0;      // average requests in flight: weighted_io_ms / interval
  double r_await_ms = 0;  // read_ms per completed read
  double w_await_ms = 0;
  double rrqm_pct = 0;  // merged / (merged + completed)
  double wrqm_pct = 0;
  double r_per_s = 0, w_per_s = 0;
};

DiskIntervalStats IntervalStats(const v1::DiskStatsInterval& d, double seconds);

}  // namespace blkbench

#endif  // BLKBENCH_COMMON_DISK_INTERVAL_H_
