// DeviceModel: the pull-driven contract between the blk-mq model and a simulated device
// (null_blk, HDD, SSD, Optane), plus the factory that builds one from matrix parameters.
#ifndef BLKBENCH_ENGINE_DEVICE_DEVICE_MODEL_H_
#define BLKBENCH_ENGINE_DEVICE_DEVICE_MODEL_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/sim/time.h"

namespace blkbench::engine {

// The driver stack a device sits behind (DeviceModel::bus()).
enum class DeviceBus { kNullBlk, kScsi, kNvme };

// One request as the driver's queue_rq hands it to the device. Sectors are 512 bytes.
struct DeviceRequest {
  uint64_t id = 0;  // caller-chosen, returned by CollectCompleted
  uint64_t sector = 0;
  uint32_t sectors = 0;
  bool write = false;
  uint32_t hw_queue = 0;  // < hw_queues()
};

// A device model is a passive component: it never schedules events itself. The simulator
// submits requests, asks for the earliest pending completion, and collects completions when
// its clock reaches that time. Every call passes a `now` that never decreases across calls.
// Models are deterministic (same seed and call sequence -> same completions) and not
// thread-safe.
class DeviceModel {
 public:
  virtual ~DeviceModel() = default;

  virtual std::string_view name() const = 0;
  // Requests accepted at once per hardware queue (NCQ depth / driver tags per hctx).
  virtual uint32_t queue_depth() const = 0;
  // Hardware queues: submit_queues for null_blk, 1 for SATA/SAS, N for NVMe.
  virtual uint32_t hw_queues() const = 0;
  virtual bool rotational() const = 0;

  // Accepts a request issued by the driver at `now`.
  // REQUIRES: rq.hw_queue < hw_queues(), fewer than queue_depth() requests in flight on that
  // hardware queue, rq.sectors > 0, `now` >= every earlier `now`.
  virtual void Submit(const DeviceRequest& rq, SimTime now) = 0;
  // Earliest pending completion time (possibly <= the last `now`), or kNever when idle.
  // The answer may only move earlier after a later Submit (e.g. an idle device starting).
  virtual SimTime NextCompletion() const = 0;
  // Appends the ids of requests completing at or before `now`, in completion order (time,
  // then submission order), and forgets them.
  virtual void CollectCompleted(SimTime now, std::vector<uint64_t>* out) = 0;
  // Requests submitted and not yet collected, over all hardware queues.
  virtual uint32_t in_flight() const = 0;

  // What the rest of the kernel sees of the device: the model reports it, so the blk-mq
  // model never asks which model it holds.
  //
  // The bus its driver speaks: SCSI (sd over AHCI or a SAS HBA) has a per-LUN dispatch
  // budget (scsi_mq_get_budget) and one interrupt vector; NVMe and null_blk have neither.
  virtual DeviceBus bus() const = 0;
  // The bytes a job may address when it names no size; 0: the device has no geometry of
  // its own (flash, null_blk), so the engine's default applies.
  virtual uint64_t capacity_bytes() const { return 0; }
  // Identical devices behind this one (DeviceArray) and the hardware queues of each:
  // queue h belongs to device h / hw_queues_per_device().
  virtual uint32_t sub_devices() const { return 1; }
  virtual uint32_t hw_queues_per_device() const { return hw_queues(); }
};

// The block major blktrace names the device by: sd's 8, null_blk's 252 (the first dynamic
// major, which it gets on a machine without other dynamic block drivers), blkext's 259 for
// NVMe namespaces.
int TraceMajor(DeviceBus bus);

// Builds a device model. `kind` is one of "null_blk", "hdd", "hdd-seed003", "ssd" (NVMe TLC),
// "ssd-sata", "ssd-seed004", "optane" (P4800X), "optane-p5800x". `params` override the
// preset; keys are "<family>.<name>" with family null_blk, hdd, ssd or optane (e.g.
// "null_blk.submit_queues" -> "128"); the names, types and valid values are the tables of
// common/sim_vocabulary.h, which the matrix parser checks too. `seed` drives every random
// choice of the model.
// Returns InvalidArgument for an unknown kind, an unknown or foreign key, or a bad value.
absl::StatusOr<std::unique_ptr<DeviceModel>> MakeDeviceModel(
    std::string_view kind, const std::map<std::string, std::string>& params, uint64_t seed);

}  // namespace blkbench::engine

#endif  // BLKBENCH_ENGINE_DEVICE_DEVICE_MODEL_H_
