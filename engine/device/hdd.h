// HDD device model: one actuator serving an NCQ queue in shortest-positioning-time order,
// with seek, rotational position, zoned transfer, sequential streaming and write-cache effects.
#ifndef BLKBENCH_ENGINE_DEVICE_HDD_H_
#define BLKBENCH_ENGINE_DEVICE_HDD_H_

#include <cstdint>
#include <deque>
#include <vector>

#include "absl/status/status.h"
#include "engine/device/device_model.h"
#include "engine/device/hdd_geometry.h"

namespace blkbench::engine {

struct HddConfig {
  HddGeometryConfig geometry;
  uint32_t queue_depth = 32;  // NCQ tags (SATA 32; SAS up to 256)
  // Volatile write cache (WCE). Modelled only where it changes positioning: with it off, a
  // sequential write that was not already queued when the previous one finished must wait
  // for the platter to come round again (a lost revolution). Writes still complete at media
  // time either way (a cache that is full in steady state), so random-write figures match.
  bool write_cache = true;
  SimTime command_overhead = 100'000;  // controller time per non-streaming command (ns)

  absl::Status Validate() const;
};

// A request that waited this long is served next regardless of positioning cost (drives
// age NCQ commands so SPTF cannot starve a far-away request forever).
inline constexpr SimTime kHddNcqMaxWait = 500'000'000;

class HddModel final : public DeviceModel {
 public:
  struct Stats {
    uint64_t served = 0;
    uint64_t sequential = 0;        // started at the previous request's end sector
    uint64_t lost_revolutions = 0;  // late sequential writes with the write cache off
    uint64_t reordered = 0;         // NCQ picked other than the oldest queued request
  };

  explicit HddModel(const HddConfig& config);  // REQUIRES: config.Validate().ok()

  std::string_view name() const override { return "hdd"; }
  uint32_t queue_depth() const override { return config_.queue_depth; }
  uint32_t hw_queues() const override { return 1; }
  bool rotational() const override { return true; }
  DeviceBus bus() const override { return DeviceBus::kScsi; }
  uint64_t capacity_bytes() const override { return geometry_.capacity_sectors() * 512; }
  void Submit(const DeviceRequest& rq, SimTime now) override;
  SimTime NextCompletion() const override;
  void CollectCompleted(SimTime now, std::vector<uint64_t>* out) override;
  uint32_t in_flight() const override { return in_flight_; }

  const HddGeometry& geometry() const { return geometry_; }
  const Stats& stats() const { return stats_; }

 private:
  struct Queued {
    uint64_t id;
    uint64_t sector;
    uint32_t sectors;
    bool write;
    SimTime arrival;
  };

  // Completes services that end at or before `now`, starting queued requests as the actuator
  // frees up, so later Submits never influence decisions made earlier in simulated time.
  void Advance(SimTime now);
  // Picks the next request at time t (SPTF with aging) and starts it. `chained`: the
  // actuator just finished the previous request and the queue already held these.
  void StartNext(SimTime t, bool chained);
  // Time from `t` until the head is over rq's first sector, ready to transfer.
  SimTime Positioning(const Queued& rq, SimTime t, bool chained, bool* sequential,
                      bool* lost_rev) const;

  HddConfig config_;
  HddGeometry geometry_;
  std::vector<Queued> queue_;  // arrival order
  bool busy_ = false;
  Queued current_{};
  SimTime current_end_ = 0;
  std::deque<std::pair<SimTime, uint64_t>> done_;  // finished, not yet collected
  uint32_t in_flight_ = 0;
  // Head state after the last service.
  double head_track_pos_ = 0;
  bool have_last_ = false;
  uint64_t last_end_sector_ = 0;
  SimTime last_end_time_ = 0;
  Stats stats_;
};

}  // namespace blkbench::engine

#endif  // BLKBENCH_ENGINE_DEVICE_HDD_H_
