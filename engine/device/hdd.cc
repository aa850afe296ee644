// HDD device model: NCQ scheduling and service timing (see hdd.h).
#include "engine/device/hdd.h"

#include <cassert>

#include "absl/strings/str_cat.h"

namespace blkbench::engine {

absl::Status HddConfig::Validate() const {
  if (absl::Status s = geometry.Validate(); !s.ok()) return s;
  if (queue_depth == 0 || queue_depth > 256) {
    return absl::InvalidArgumentError(
        absl::StrCat("hdd.queue_depth must be in [1, 256], got ", queue_depth));
  }
  if (command_overhead > 10'000'000) {
    return absl::InvalidArgumentError("hdd.command_overhead_us must be <= 10000");
  }
  return absl::OkStatus();
}

HddModel::HddModel(const HddConfig& config) : config_(config), geometry_(config.geometry) {
  assert(config.Validate().ok());
  queue_.reserve(config_.queue_depth);
}

void HddModel::Submit(const DeviceRequest& rq, SimTime now) {
  assert(rq.hw_queue == 0);
  assert(in_flight_ < config_.queue_depth);
  assert(rq.sectors > 0 && rq.sector + rq.sectors <= geometry_.capacity_sectors());
  Advance(now);
  ++in_flight_;
  queue_.push_back(Queued{rq.id, rq.sector, rq.sectors, rq.write, now});
  if (!busy_) StartNext(now, /*chained=*/false);
}

SimTime HddModel::NextCompletion() const {
  if (!done_.empty()) return done_.front().first;
  return busy_ ? current_end_ : kNever;
}

void HddModel::CollectCompleted(SimTime now, std::vector<uint64_t>* out) {
  Advance(now);
  while (!done_.empty() && done_.front().first <= now) {
    out->push_back(done_.front().second);
    done_.pop_front();
    --in_flight_;
  }
}

void HddModel::Advance(SimTime now) {
  while (busy_ && current_end_ <= now) {
    done_.emplace_back(current_end_, current_.id);
    busy_ = false;
    have_last_ = true;
    last_end_sector_ = current_.sector + current_.sectors;
    last_end_time_ = current_end_;
    head_track_pos_ = geometry_.TrackPos(last_end_sector_ - 1);
    if (!queue_.empty()) StartNext(current_end_, /*chained=*/true);
  }
}

SimTime HddModel::Positioning(const Queued& rq, SimTime t, bool chained, bool* sequential,
                              bool* lost_rev) const {
  *sequential = have_last_ && rq.sector == last_end_sector_;
  *lost_rev = false;
  if (*sequential) {
    // Queued back to back: the drive chains the command and keeps streaming.
    if (chained) return 0;
    // Reads stream into the read-ahead buffer and a write cache absorbs late writes.
    if (!rq.write || config_.write_cache) return config_.command_overhead;
    // Write-through: the target sector passed under the head at last_end_time_; wait for
    // it to come round again (mirrors the "lost revolution" of a late next write).
    *lost_rev = true;
    const SimTime ready = t + config_.command_overhead;
    const SimTime rot = geometry_.rotation();
    return config_.command_overhead + (rot - (ready - last_end_time_) % rot) % rot;
  }
  const double target = geometry_.TrackPos(rq.sector);
  const SimTime seek = geometry_.SeekTime(head_track_pos_, target);
  const SimTime on_track = t + config_.command_overhead + seek;
  const double angle = target - static_cast<double>(static_cast<uint64_t>(target));
  return config_.command_overhead + seek +
         geometry_.RotationalWait(geometry_.HeadAngle(on_track), angle);
}

void HddModel::StartNext(SimTime t, bool chained) {
  assert(!busy_ && !queue_.empty());
  // Shortest positioning time first, rotational position aware (what NCQ firmware does);
  // ties go to the older request. A request past kHddNcqMaxWait wins outright.
  size_t best = 0;
  SimTime best_pos = kNever;
  bool best_seq = false, best_lost = false;
  if (t - queue_.front().arrival >= kHddNcqMaxWait) {
    best_pos = Positioning(queue_.front(), t, chained, &best_seq, &best_lost);
  } else {
    for (size_t i = 0; i < queue_.size(); ++i) {
      bool seq, lost;
      const SimTime pos = Positioning(queue_[i], t, chained, &seq, &lost);
      if (pos < best_pos) {
        best = i;
        best_pos = pos;
        best_seq = seq;
        best_lost = lost;
      }
    }
  }
  current_ = queue_[best];
  queue_.erase(queue_.begin() + static_cast<std::ptrdiff_t>(best));
  busy_ = true;
  current_end_ = t + best_pos + geometry_.TransferTime(current_.sector, current_.sectors);
  ++stats_.served;
  stats_.sequential += best_seq;
  stats_.lost_revolutions += best_lost;
  stats_.reordered += best != 0;
}

}  // namespace blkbench::engine
