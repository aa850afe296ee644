#include "engine/device/device_array.h"

#include <utility>

namespace blkbench::engine {

DeviceArray::DeviceArray(std::vector<std::unique_ptr<DeviceModel>> devices)
    : devices_(std::move(devices)), per_(devices_[0]->hw_queues()) {}

void DeviceArray::Submit(const DeviceRequest& rq, SimTime now) {
  DeviceRequest local = rq;
  local.hw_queue = rq.hw_queue % per_;
  devices_[rq.hw_queue / per_]->Submit(local, now);
}

SimTime DeviceArray::NextCompletion() const {
  SimTime next = kNever;
  for (const auto& d : devices_) next = std::min(next, d->NextCompletion());
  return next;
}

// Repeatedly takes the device whose next completion is earliest and collects what it
// completes by then, so ids come out in time order over the devices.
void DeviceArray::CollectCompleted(SimTime now, std::vector<uint64_t>* out) {
  for (;;) {
    DeviceModel* first = nullptr;
    SimTime at = kNever;
    for (const auto& d : devices_) {
      const SimTime t = d->NextCompletion();
      if (t < at) {
        at = t;
        first = d.get();
      }
    }
    if (first == nullptr || at > now) return;
    first->CollectCompleted(at, out);
  }
}

uint32_t DeviceArray::in_flight() const {
  uint32_t n = 0;
  for (const auto& d : devices_) n += d->in_flight();
  return n;
}

}  // namespace blkbench::engine
