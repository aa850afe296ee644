// Flash/Optane device model: stage timing (see ssd.h).
#include "engine/device/ssd.h"

#include <algorithm>
#include <cassert>

#include "absl/strings/str_cat.h"

namespace blkbench::engine {

absl::Status SsdConfig::Validate() const {
  // Name parameters the way the factory spells them for this preset's family.
  const std::string f = name.starts_with("optane") ? "optane." : "ssd.";
  auto bad = [&f](std::string_view param, std::string_view rule) {
    return absl::InvalidArgumentError(absl::StrCat(f, absl::string_view(param.data(), param.size()),
                                                   " ",
                                                   absl::string_view(rule.data(), rule.size())));
  };
  if (dies > 4'096) return bad("dies", "must be <= 4096");
  if (dies > 0 && read_ns == 0) return bad("read_us", "must be > 0 when dies > 0");
  if (page_bytes < 512 || page_bytes % 512 != 0) {
    return bad("page_size", "must be a multiple of 512 bytes");
  }
  if (bus_mbps < 0) return bad("bus_mbps", "must be >= 0");
  if (program_mbps < 0) return bad("program_mbps", "must be >= 0");
  // Without any serial cost the model would have no throughput cap at all.
  if (ctrl_ns == 0 && bus_mbps == 0) return bad("ctrl_us", "or bus_mbps must be non-zero");
  if (program_mbps > 0 && write_buffer_bytes == 0) return bad("write_buffer", "must be > 0");
  if (queue_depth == 0 || queue_depth > 65'535) return bad("queue_depth", "must be in [1, 65535]");
  if (hw_queues == 0 || hw_queues > 65'535) return bad("hw_queues", "must be in [1, 65535]");
  return absl::OkStatus();
}

SsdModel::SsdModel(const SsdConfig& config, uint64_t seed)
    : config_(config), rng_(seed), die_free_(config.dies, 0), in_flight_(config.hw_queues) {
  assert(config.Validate().ok());
}

SimTime SsdModel::SerialTime(uint64_t bytes) const {
  const double bus = config_.bus_mbps > 0 ? static_cast<double>(bytes) * 1e3 / config_.bus_mbps : 0;
  return config_.ctrl_ns + static_cast<SimTime>(bus);
}

SimTime SsdModel::ReadDone(uint64_t bytes, SimTime start) {
  if (config_.dies == 0) return start;
  // Each page of the request lands on a uniformly random die (no LBA-to-die mapping is
  // kept: random placement is what a well-worn FTL looks like to random I/O). Dies serve
  // FIFO; the request is done when its last page is.
  const uint64_t pages = (bytes + config_.page_bytes - 1) / config_.page_bytes;
  SimTime done = start;
  for (uint64_t p = 0; p < pages; ++p) {
    SimTime& die = die_free_[rng_.Below(config_.dies)];
    die = std::max(die, start) + config_.read_ns;
    done = std::max(done, die);
  }
  return done;
}

SimTime SsdModel::WriteAccepted(uint64_t bytes, SimTime start) {
  if (config_.program_mbps <= 0) return start;
  // Token bucket: the buffer drains at program_mbps; a write waits (FIFO) until it fits.
  const double capacity = static_cast<double>(config_.write_buffer_bytes);
  const double b = std::min(static_cast<double>(bytes), capacity);
  const double drain_per_ns = config_.program_mbps * 1e-3;  // MB/s -> bytes/ns
  SimTime t = std::max(start, buffer_time_);
  buffer_level_ =
      std::max(0.0, buffer_level_ - static_cast<double>(t - buffer_time_) * drain_per_ns);
  if (buffer_level_ + b > capacity) {
    t += static_cast<SimTime>((buffer_level_ + b - capacity) / drain_per_ns);
    buffer_level_ = capacity - b;
  }
  buffer_level_ += b;
  buffer_time_ = t;
  return t;
}

void SsdModel::Submit(const DeviceRequest& rq, SimTime now) {
  assert(rq.hw_queue < config_.hw_queues);
  assert(in_flight_.on(rq.hw_queue) < config_.queue_depth);
  assert(rq.sectors > 0);
  const uint64_t bytes = uint64_t{rq.sectors} * 512;
  // The serial stage is FIFO and `now` never decreases, so every later stage sees arrivals
  // in submission order and the completion time is final at submission.
  serial_free_ = std::max(serial_free_, now) + SerialTime(bytes);
  const SimTime at = rq.write ? WriteAccepted(bytes, serial_free_) + config_.write_ack_ns
                              : ReadDone(bytes, serial_free_) + config_.fixed_ns;
  in_flight_.Add(rq.hw_queue);
  pending_.Push(at, rq.id, rq.hw_queue);
}

void SsdModel::CollectCompleted(SimTime now, std::vector<uint64_t>* out) {
  pending_.PopDue(now, [&](uint64_t id, uint32_t hw_queue) {
    out->push_back(id);
    in_flight_.Remove(hw_queue);
  });
}

}  // namespace blkbench::engine
