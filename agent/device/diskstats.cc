// /proc/diskstats and iostat -x arithmetic (diskstats.h).
#include "agent/device/diskstats.h"

#include <algorithm>
#include <chrono>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/disk_interval.h"

namespace blkbench {

absl::StatusOr<DiskStats> ParseDiskStats(absl::string_view text, uint32_t major, uint32_t minor) {
  int line_no = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipWhitespace())) {
    ++line_no;
    std::vector<absl::string_view> f = absl::StrSplit(line, ' ', absl::SkipEmpty());
    if (f.size() < 14) {
      return absl::InvalidArgumentError(absl::StrCat("diskstats line ", line_no, ": ", f.size(),
                                                     " fields, expected at least 14: \"", line,
                                                     "\""));
    }
    uint32_t ma = 0, mi = 0;
    if (!absl::SimpleAtoi(f[0], &ma) || !absl::SimpleAtoi(f[1], &mi) || ma != major ||
        mi != minor) {
      continue;
    }
    std::vector<uint64_t> v(f.size() - 3, 0);
    for (size_t i = 3; i < f.size(); ++i) {
      if (!absl::SimpleAtoi(f[i], &v[i - 3])) {
        return absl::InvalidArgumentError(absl::StrCat("diskstats line ", line_no, ": field ",
                                                       i + 1, " is not a number: \"", f[i], "\""));
      }
    }
    v.resize(17, 0);  // older kernels lack the discard (4.18) and flush (5.5) fields
    DiskStats s;
    s.major = ma;
    s.minor = mi;
    s.name = std::string(f[2]);
    s.reads = v[0];
    s.reads_merged = v[1];
    s.sectors_read = v[2];
    s.read_ms = v[3];
    s.writes = v[4];
    s.writes_merged = v[5];
    s.sectors_written = v[6];
    s.write_ms = v[7];
    s.in_flight = v[8];
    s.io_ms = v[9];
    s.weighted_io_ms = v[10];
    s.discards = v[11];
    s.discards_merged = v[12];
    s.sectors_discarded = v[13];
    s.discard_ms = v[14];
    s.flushes = v[15];
    s.flush_ms = v[16];
    return s;
  }
  return absl::NotFoundError(absl::StrCat("device ", major, ":", minor, " is not in diskstats"));
}

absl::StatusOr<DiskStats> ReadDiskStats(uint32_t major, uint32_t minor, const SystemPaths& paths) {
  const std::string path = paths.procfs + "/diskstats";
  absl::StatusOr<std::string> text = ReadWholeFile(path);
  if (!text.ok()) return text.status();
  absl::StatusOr<DiskStats> s = ParseDiskStats(*text, major, minor);
  if (!s.ok())
    return absl::Status(s.status().code(), absl::StrCat(path, ": ", s.status().message()));
  s->read_at_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                      std::chrono::steady_clock::now().time_since_epoch())
                      .count();
  return s;
}

DiskStatsDelta Delta(const DiskStats& before, const DiskStats& after, double elapsed_s) {
  DiskStatsDelta d;
  d.elapsed_s = elapsed_s;
  v1::DiskStatsInterval counters;
  if (elapsed_s <= 0 || !IntervalDelta(before, after, &counters)) return d;
  // The per-interval arithmetic (common/disk_interval.h), over the whole run.
  const DiskIntervalStats s = IntervalStats(counters, elapsed_s);
  d.reads = counters.reads();
  d.writes = counters.writes();
  d.reads_merged = counters.reads_merged();
  d.writes_merged = counters.writes_merged();
  d.read_bytes = counters.sectors_read() * 512;
  d.write_bytes = counters.sectors_written() * 512;
  d.r_per_s = s.r_per_s;
  d.w_per_s = s.w_per_s;
  d.rkb_per_s = d.read_bytes / 1024.0 / elapsed_s;
  d.wkb_per_s = d.write_bytes / 1024.0 / elapsed_s;
  d.rrqm_pct = s.rrqm_pct;
  d.wrqm_pct = s.wrqm_pct;
  d.r_await_ms = s.r_await_ms;
  d.w_await_ms = s.w_await_ms;
  d.rareq_kb = d.reads == 0 ? 0 : d.read_bytes / 1024.0 / d.reads;
  d.wareq_kb = d.writes == 0 ? 0 : d.write_bytes / 1024.0 / d.writes;
  d.aqu_sz = s.aqu_sz;
  d.util_pct = s.util_pct;
  return d;
}

bool IntervalDelta(const DiskStats& before, const DiskStats& after, v1::DiskStatsInterval* out) {
  const std::pair<uint64_t, uint64_t> counters[] = {{before.reads, after.reads},
                                                    {before.reads_merged, after.reads_merged},
                                                    {before.sectors_read, after.sectors_read},
                                                    {before.read_ms, after.read_ms},
                                                    {before.writes, after.writes},
                                                    {before.writes_merged, after.writes_merged},
                                                    {before.sectors_written, after.sectors_written},
                                                    {before.write_ms, after.write_ms},
                                                    {before.io_ms, after.io_ms},
                                                    {before.weighted_io_ms, after.weighted_io_ms},
                                                    {before.discards, after.discards},
                                                    {before.flushes, after.flushes}};
  for (const auto& [b, a] : counters) {
    if (a < b) return false;
  }
  out->set_reads(after.reads - before.reads);
  out->set_reads_merged(after.reads_merged - before.reads_merged);
  out->set_sectors_read(after.sectors_read - before.sectors_read);
  out->set_read_ms(after.read_ms - before.read_ms);
  out->set_writes(after.writes - before.writes);
  out->set_writes_merged(after.writes_merged - before.writes_merged);
  out->set_sectors_written(after.sectors_written - before.sectors_written);
  out->set_write_ms(after.write_ms - before.write_ms);
  out->set_in_flight(after.in_flight);
  out->set_io_ms(after.io_ms - before.io_ms);
  out->set_weighted_io_ms(after.weighted_io_ms - before.weighted_io_ms);
  out->set_discards(after.discards - before.discards);
  out->set_flushes(after.flushes - before.flushes);
  if (before.read_at_ns > 0 && after.read_at_ns > before.read_at_ns)
    out->set_elapsed_ns(static_cast<uint64_t>(after.read_at_ns - before.read_at_ns));
  return true;
}

}  // namespace blkbench
