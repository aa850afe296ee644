// FitSsd: the SSD model's serial stage, pipelined latency and write ack fitted from a real
// device's QD x block-size sweep, so `blkbench calibrate` can write an engine preset.
#ifndef BLKBENCH_ENGINE_DEVICE_SSD_FIT_H_
#define BLKBENCH_ENGINE_DEVICE_SSD_FIT_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/device/ssd.h"

namespace blkbench::engine {

// One cell of the sweep: a closed loop of `depth` random IOs of `block_bytes`.
struct SsdSweepPoint {
  bool write = false;
  uint64_t block_bytes = 4'096;
  uint32_t depth = 1;
  double iops = 0;
  double mean_latency_ns = 0;
};

// What is fitted. Not fitted (left at zero / off): dies, program_mbps — a loop device or a
// drive within its write buffer shows no media parallelism or program cap in a short sweep.
struct SsdFitParams {
  SimTime ctrl_ns = 0;       // per-IO serial cost: intercept of 1 / IOPS at saturation vs bytes
  double bus_mbps = 0;       // per-byte serial cost (slope); 0 when bytes cost nothing measurable
  SimTime fixed_ns = 0;      // read QD1 latency minus the serial time
  SimTime write_ack_ns = 0;  // write QD1 latency minus the serial time
  uint32_t queue_depth = 0;  // deepest depth swept

  SsdConfig ToConfig() const;
};

// REQUIRES nothing of the order of `points`. Needs, for reads, a QD1 point and a saturated
// (deepest) point at two or more block sizes, and a QD1 write point; InvalidArgument if not.
absl::StatusOr<SsdFitParams> FitSsd(const std::vector<SsdSweepPoint>& points);

}  // namespace blkbench::engine

#endif  // BLKBENCH_ENGINE_DEVICE_SSD_FIT_H_
