// DeviceArray: several identical devices behind one DeviceModel, as the blk-mq model sees
// the target of a job with several files (fio filename=/dev/nvme0n1:/dev/nvme1n1, t/io_uring
// with two devices). Device d owns hardware queues [d * per, (d + 1) * per) of the array;
// completions come out in time order over all devices (ties: the lower device first).
#ifndef BLKBENCH_ENGINE_DEVICE_DEVICE_ARRAY_H_
#define BLKBENCH_ENGINE_DEVICE_DEVICE_ARRAY_H_

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "engine/device/device_model.h"

namespace blkbench::engine {

class DeviceArray final : public DeviceModel {
 public:
  // REQUIRES: devices non-empty, every one with the same queue depth, hardware queues and
  // rotational flag.
  explicit DeviceArray(std::vector<std::unique_ptr<DeviceModel>> devices);

  size_t size() const { return devices_.size(); }
  const DeviceModel& device(size_t d) const { return *devices_[d]; }
  // Hardware queues of one device.
  uint32_t per_device_queues() const { return per_; }

  std::string_view name() const override { return devices_[0]->name(); }
  uint32_t queue_depth() const override { return devices_[0]->queue_depth(); }
  uint32_t hw_queues() const override { return per_ * static_cast<uint32_t>(devices_.size()); }
  bool rotational() const override { return devices_[0]->rotational(); }
  DeviceBus bus() const override { return devices_[0]->bus(); }
  uint64_t capacity_bytes() const override { return devices_[0]->capacity_bytes(); }
  uint32_t sub_devices() const override { return static_cast<uint32_t>(devices_.size()); }
  uint32_t hw_queues_per_device() const override { return per_; }
  void Submit(const DeviceRequest& rq, SimTime now) override;
  SimTime NextCompletion() const override;
  void CollectCompleted(SimTime now, std::vector<uint64_t>* out) override;
  uint32_t in_flight() const override;

 private:
  std::vector<std::unique_ptr<DeviceModel>> devices_;
  uint32_t per_ = 1;
};

}  // namespace blkbench::engine

#endif  // BLKBENCH_ENGINE_DEVICE_DEVICE_ARRAY_H_
