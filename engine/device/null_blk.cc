// null_blk device model: see null_blk.h.
#include "engine/device/null_blk.h"

#include <cassert>

#include "absl/strings/str_cat.h"

namespace blkbench::engine {

absl::Status NullBlkConfig::Validate() const {
  if (submit_queues == 0) return absl::InvalidArgumentError("null_blk.submit_queues must be > 0");
  if (hw_queue_depth == 0) {
    return absl::InvalidArgumentError("null_blk.hw_queue_depth must be > 0");
  }
  if (irqmode > kIrqTimer) {
    return absl::InvalidArgumentError(
        absl::StrCat("null_blk.irqmode must be 0 (none), 1 (softirq) or 2 (timer), got ", irqmode));
  }
  // null_blk accepts 512..4096 (null_validate_conf rounds; we insist on a power of two).
  if (blocksize < 512 || blocksize > 4096 || (blocksize & (blocksize - 1)) != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("null_blk.blocksize must be a power of two in [512, 4096], got ", blocksize));
  }
  return absl::OkStatus();
}

NullBlkModel::NullBlkModel(const NullBlkConfig& config)
    : config_(config), in_flight_(config.submit_queues) {
  assert(config.Validate().ok());
  switch (config_.irqmode) {
    case NullBlkConfig::kIrqNone:
      delay_ = 0;
      break;
    case NullBlkConfig::kIrqSoftirq:
      delay_ = kNullBlkSoftirqLatency;
      break;
    default:
      delay_ = config_.completion_nsec;
      break;
  }
}

void NullBlkModel::Submit(const DeviceRequest& rq, SimTime now) {
  assert(rq.hw_queue < config_.submit_queues);
  assert(in_flight_.on(rq.hw_queue) < config_.hw_queue_depth);
  assert(pending_.empty() || pending_.back().at <= now + delay_);
  in_flight_.Add(rq.hw_queue);
  pending_.push_back(Pending{now + delay_, rq.id, rq.hw_queue});
}

SimTime NullBlkModel::NextCompletion() const {
  return pending_.empty() ? kNever : pending_.front().at;
}

void NullBlkModel::CollectCompleted(SimTime now, std::vector<uint64_t>* out) {
  while (!pending_.empty() && pending_.front().at <= now) {
    out->push_back(pending_.front().id);
    in_flight_.Remove(pending_.front().hw_queue);
    pending_.pop_front();
  }
}

}  // namespace blkbench::engine
