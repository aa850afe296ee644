// null_blk device model (drivers/block/null_blk/main.c, queue_mode=2): no media, completion
// inline (irqmode 0), after a softirq (1) or after an hrtimer of completion_nsec (2).
#ifndef BLKBENCH_ENGINE_DEVICE_NULL_BLK_H_
#define BLKBENCH_ENGINE_DEVICE_NULL_BLK_H_

#include <cstdint>
#include <deque>
#include <vector>

#include "absl/status/status.h"
#include "engine/device/completion_queue.h"
#include "engine/device/device_model.h"

namespace blkbench::engine {

// Module parameters, with the kernel's defaults.
struct NullBlkConfig {
  enum IrqMode : uint32_t { kIrqNone = 0, kIrqSoftirq = 1, kIrqTimer = 2 };
  uint32_t submit_queues = 1;
  uint32_t hw_queue_depth = 64;
  uint32_t irqmode = kIrqSoftirq;
  uint64_t completion_nsec = 10'000;  // only used by irqmode 2 (null_cmd_timer_expired)
  uint32_t blocksize = 512;
  bool memory_backed = false;  // accepted for fidelity; no data is kept either way

  absl::Status Validate() const;
};

// irqmode 1 raises BLOCK_SOFTIRQ from queue_rq (nullb_complete_cmd ->
// blk_mq_complete_request); it runs on irq exit of the same CPU. We charge a fixed 1 us:
// the order of a softirq round trip on a server core. CPU cost is the blk-mq model's job.
inline constexpr SimTime kNullBlkSoftirqLatency = 1'000;

class NullBlkModel final : public DeviceModel {
 public:
  explicit NullBlkModel(const NullBlkConfig& config);  // REQUIRES: config.Validate().ok()

  std::string_view name() const override { return "null_blk"; }
  uint32_t queue_depth() const override { return config_.hw_queue_depth; }
  uint32_t hw_queues() const override { return config_.submit_queues; }
  bool rotational() const override { return false; }
  DeviceBus bus() const override { return DeviceBus::kNullBlk; }
  void Submit(const DeviceRequest& rq, SimTime now) override;
  SimTime NextCompletion() const override;
  void CollectCompleted(SimTime now, std::vector<uint64_t>* out) override;
  uint32_t in_flight() const override { return in_flight_.total(); }

  // For the blk-mq model: with irqmode 0 the completion CPU cost belongs to queue_rq.
  uint32_t irqmode() const { return config_.irqmode; }
  uint64_t completion_nsec() const { return config_.completion_nsec; }
  uint32_t blocksize() const { return config_.blocksize; }
  // Time from queue_rq to completion for the configured irqmode.
  SimTime completion_delay() const { return delay_; }

 private:
  struct Pending {
    SimTime at;
    uint64_t id;
    uint32_t hw_queue;
  };
  NullBlkConfig config_;
  SimTime delay_;
  // The delay is constant, so completions are due in submission order: a FIFO suffices.
  std::deque<Pending> pending_;
  InFlightCounter in_flight_;
};

}  // namespace blkbench::engine

#endif  // BLKBENCH_ENGINE_DEVICE_NULL_BLK_H_
