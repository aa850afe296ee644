// FitSsd (see ssd_fit.h): least squares on the saturated points, then QD1 residuals.
#include "engine/device/ssd_fit.h"

#include <algorithm>
#include <map>

namespace blkbench::engine {

SsdConfig SsdFitParams::ToConfig() const {
  SsdConfig c;
  c.name = "ssd-calibrated";
  c.dies = 0;
  c.ctrl_ns = ctrl_ns;
  c.bus_mbps = bus_mbps;
  c.fixed_ns = fixed_ns;
  c.write_ack_ns = write_ack_ns;
  c.program_mbps = 0;
  c.queue_depth = std::max<uint32_t>(queue_depth, 1);
  return c;
}

absl::StatusOr<SsdFitParams> FitSsd(const std::vector<SsdSweepPoint>& points) {
  // Why the deepest read point per block size: in the model a closed loop deep enough keeps
  // the serial stage busy, so 1 / IOPS there is ctrl_ns + bytes * 1e3 / bus_mbps exactly.
  std::map<uint64_t, const SsdSweepPoint*> deepest;
  uint32_t max_depth = 0;
  for (const SsdSweepPoint& p : points) {
    if (p.iops <= 0) return absl::InvalidArgumentError("sweep point with no IOPS");
    max_depth = std::max(max_depth, p.depth);
    if (p.write) continue;
    auto& d = deepest[p.block_bytes];
    if (d == nullptr || p.depth > d->depth) d = &p;
  }
  if (deepest.size() < 2) {
    return absl::InvalidArgumentError("need saturated read points at two or more block sizes");
  }
  double n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (const auto& [bytes, p] : deepest) {
    const double x = static_cast<double>(bytes), y = 1e9 / p->iops;
    n += 1, sx += x, sy += y, sxx += x * x, sxy += x * y;
  }
  const double slope = (n * sxy - sx * sy) / (n * sxx - sx * sx);  // ns per byte
  SsdFitParams fit;
  fit.queue_depth = max_depth;
  double intercept = (sy - std::max(slope, 0.0) * sx) / n;
  fit.bus_mbps = slope > 0 ? 1e3 / slope : 0;
  fit.ctrl_ns = static_cast<SimTime>(std::max(intercept, 1.0));
  auto serial = [&](uint64_t bytes) {
    return static_cast<double>(fit.ctrl_ns) +
           (fit.bus_mbps > 0 ? static_cast<double>(bytes) * 1e3 / fit.bus_mbps : 0);
  };
  // The QD1 residual is the pipelined part, averaged over block sizes.
  double read_sum = 0, write_sum = 0;
  int reads = 0, writes = 0;
  for (const SsdSweepPoint& p : points) {
    if (p.depth != 1) continue;
    const double rest = std::max(0.0, p.mean_latency_ns - serial(p.block_bytes));
    (p.write ? write_sum : read_sum) += rest;
    ++(p.write ? writes : reads);
  }
  if (reads == 0 || writes == 0) {
    return absl::InvalidArgumentError("need QD1 read and QD1 write points");
  }
  fit.fixed_ns = static_cast<SimTime>(read_sum / reads);
  fit.write_ack_ns = static_cast<SimTime>(write_sum / writes);
  return fit;
}

}  // namespace blkbench::engine
