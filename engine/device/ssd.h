// Flash/Optane device model: a serial front end (command processing + host link), then
// parallel dies chosen at random per page, then a fixed pipelined latency; writes land in a
// write buffer drained at the program bandwidth.
#ifndef BLKBENCH_ENGINE_DEVICE_SSD_H_
#define BLKBENCH_ENGINE_DEVICE_SSD_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "engine/device/completion_queue.h"
#include "engine/device/device_model.h"
#include "engine/device/splitmix.h"

namespace blkbench::engine {

// Defaults: an NVMe TLC drive after MQSim's ssdconfig.xml (8 channels x 4 chips x 2 dies,
// 8 KiB pages, tR 75 us) on PCIe Gen3 x4. See ssd_presets.h for the other presets.
struct SsdConfig {
  std::string name = "ssd";
  uint32_t dies = 64;        // 0: no media stage (Optane: media time folded into fixed_ns)
  SimTime read_ns = 75'000;  // die busy time per page read (tR + die-to-controller transfer)
  uint64_t page_bytes = 8'192;
  // Serial stage, one command at a time: ctrl_ns + bytes / bus_mbps. It caps small-block
  // IOPS at 1 / (ctrl_ns + 4 KiB / bus) and bandwidth at bus_mbps.
  SimTime ctrl_ns = 300;
  double bus_mbps = 3'500;    // MB/s (10^6 B/s); 0 = no per-byte cost
  SimTime fixed_ns = 10'000;  // pipelined latency (firmware, DMA, interrupt); no cap
  // Buffered writes complete write_ack_ns after the serial stage once buffer space is free.
  SimTime write_ack_ns = 15'000;
  uint64_t write_buffer_bytes = uint64_t{256} << 20;
  double program_mbps = 1'400;  // sustained background program rate; 0 = unlimited
  uint32_t queue_depth = 1'023;
  uint32_t hw_queues = 1;
  DeviceBus bus = DeviceBus::kNvme;  // kScsi: a SATA SSD behind AHCI

  absl::Status Validate() const;
};

class SsdModel final : public DeviceModel {
 public:
  SsdModel(const SsdConfig& config, uint64_t seed);  // REQUIRES: config.Validate().ok()

  std::string_view name() const override { return config_.name; }
  uint32_t queue_depth() const override { return config_.queue_depth; }
  uint32_t hw_queues() const override { return config_.hw_queues; }
  bool rotational() const override { return false; }
  DeviceBus bus() const override { return config_.bus; }
  void Submit(const DeviceRequest& rq, SimTime now) override;
  SimTime NextCompletion() const override { return pending_.Next(); }
  void CollectCompleted(SimTime now, std::vector<uint64_t>* out) override;
  uint32_t in_flight() const override { return in_flight_.total(); }

  const SsdConfig& config() const { return config_; }

 private:
  SimTime SerialTime(uint64_t bytes) const;
  SimTime ReadDone(uint64_t bytes, SimTime start);
  SimTime WriteAccepted(uint64_t bytes, SimTime start);

  SsdConfig config_;
  SplitMix64 rng_;
  SimTime serial_free_ = 0;
  std::vector<SimTime> die_free_;
  // Write buffer fill level (bytes) as of buffer_time_.
  double buffer_level_ = 0;
  SimTime buffer_time_ = 0;
  CompletionQueue pending_;
  InFlightCounter in_flight_;
};

}  // namespace blkbench::engine

#endif  // BLKBENCH_ENGINE_DEVICE_SSD_H_
