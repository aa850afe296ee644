// The block layer's own per-device counters (/proc/diskstats, Documentation/admin-guide/
// iostats.rst) and what iostat -x derives from two readings: IOPS, throughput, merges,
// await, average request size, queue size (aqu-sz) and utilisation. The agent reads the
// device before and after a run, so a result says what the device saw, not only what the
// job submitted (fio's disk_util section comes from the same counters).
#ifndef BLKBENCH_AGENT_DEVICE_DISKSTATS_H_
#define BLKBENCH_AGENT_DEVICE_DISKSTATS_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "agent/device/sysfs.h"
#include "blkbench/v1/metrics.pb.h"

namespace blkbench {

// One line of /proc/diskstats (fields 4–20 of iostats.rst; the discard and flush fields
// are zero on kernels before 4.18 and 5.5). Times are milliseconds, sectors 512 bytes.
struct DiskStats {
  uint32_t major = 0, minor = 0;
  std::string name;
  uint64_t reads = 0, reads_merged = 0, sectors_read = 0, read_ms = 0;
  uint64_t writes = 0, writes_merged = 0, sectors_written = 0, write_ms = 0;
  uint64_t in_flight = 0;
  uint64_t io_ms = 0;           // time the device had I/O in flight (util)
  uint64_t weighted_io_ms = 0;  // sum of each request's time in flight (aqu-sz)
  uint64_t discards = 0, discards_merged = 0, sectors_discarded = 0, discard_ms = 0;
  uint64_t flushes = 0, flush_ms = 0;
  int64_t read_at_ns = 0;  // steady clock when ReadDiskStats read it (0 when parsed)
};

// The line for major:minor in diskstats text. NotFound naming the device when absent;
// InvalidArgument naming the line when a line has fewer than 14 fields.
absl::StatusOr<DiskStats> ParseDiskStats(absl::string_view text, uint32_t major, uint32_t minor);

// Reads <procfs>/diskstats for major:minor, stamping read_at_ns.
absl::StatusOr<DiskStats> ReadDiskStats(uint32_t major, uint32_t minor,
                                        const SystemPaths& paths = SystemPaths());

// iostat -x over an interval (sysstat's rd_stats arithmetic): rates per second of
// `elapsed_s`, awaits in ms per completed request, sizes in KiB per request.
struct DiskStatsDelta {
  double elapsed_s = 0;
  uint64_t reads = 0, writes = 0, reads_merged = 0, writes_merged = 0;
  uint64_t read_bytes = 0, write_bytes = 0;
  double r_per_s = 0, w_per_s = 0;
  double rkb_per_s = 0, wkb_per_s = 0;
  double rrqm_pct = 0, wrqm_pct = 0;  // merged / (merged + completed)
  double r_await_ms = 0, w_await_ms = 0;
  double rareq_kb = 0, wareq_kb = 0;
  double aqu_sz = 0;    // average requests in flight
  double util_pct = 0;  // io_ms / elapsed, capped at 100
};

// `after` − `before` over `elapsed_s` (> 0). Counters that went backwards (the device was
// re-created between the readings) give an all-zero delta with elapsed_s set.
DiskStatsDelta Delta(const DiskStats& before, const DiskStats& after, double elapsed_s);

// The counters' deltas `after` − `before` for one sample interval (Sample.device), with
// in_flight as read at `after` and elapsed_ns the time between the two readings (0 when
// either lacks read_at_ns). False, and `out` untouched, when a counter went backwards
// (the device was re-created between the readings).
bool IntervalDelta(const DiskStats& before, const DiskStats& after, v1::DiskStatsInterval* out);

}  // namespace blkbench

#endif  // BLKBENCH_AGENT_DEVICE_DISKSTATS_H_
