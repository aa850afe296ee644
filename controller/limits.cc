// Stream caps and message-rate buckets of the controller's gRPC server; see limits.h.
#include "controller/limits.h"

#include <algorithm>
#include <cstdint>
#include <limits>

#include "absl/strings/str_cat.h"

namespace blkbench {

absl::Status CheckLimits(const ServiceLimits& limits) {
  auto at_least = [](const char* flag, double value, double min, double max) {
    if (value >= min && value <= max) return absl::OkStatus();
    return absl::InvalidArgumentError(absl::StrCat("controller: --", flag, " is ", value,
                                                   "; it must be in [", min, ", ", max, "]"));
  };
  constexpr double kMaxInt = std::numeric_limits<int32_t>::max();
  // The thread cap is their sum, an int too.
  constexpr double kMaxCap = 1'000'000;
  for (absl::Status s : {
           at_least("max_agent_streams", limits.max_agent_streams, 1, kMaxCap),
           at_least("max_watch_streams", limits.max_watch_streams, 1, kMaxCap),
           at_least("unary_threads", limits.unary_threads, 0, kMaxCap),
           at_least("agent_workers", limits.agent_workers, 1, 1'000),
           at_least("agent_write_queue", limits.agent_write_queue, 1, kMaxCap),
           at_least("max_streams_per_connection", limits.max_streams_per_connection, 1, kMaxInt),
           at_least("unary_deadline_ms", static_cast<double>(limits.unary_deadline_ms), 1, kMaxInt),
           at_least("max_connection_idle_ms", static_cast<double>(limits.max_connection_idle_ms), 1,
                    kMaxInt),
           at_least("handshake_timeout_ms", static_cast<double>(limits.handshake_timeout_ms), 1,
                    kMaxInt),
           at_least("agent_msg_rate", limits.agent_messages_per_s, 1, 1e12),
           at_least("agent_msg_burst", limits.agent_message_burst, 1, 1e12),
       }) {
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

int MaxServerThreads(const ServiceLimits& limits) {
  return limits.max_watch_streams + limits.unary_threads + 1;
}

StreamSlots::Slot::~Slot() {
  if (slots_ == nullptr) return;
  absl::MutexLock lock(&slots_->mu_);
  --slots_->in_use_;
}

StreamSlots::Slot StreamSlots::TryAcquire() {
  absl::MutexLock lock(&mu_);
  if (in_use_ >= capacity_) {
    ++refused_;
    return Slot(nullptr);
  }
  ++in_use_;
  return Slot(this);
}

int StreamSlots::in_use() const {
  absl::MutexLock lock(&mu_);
  return in_use_;
}

uint64_t StreamSlots::refused() const {
  absl::MutexLock lock(&mu_);
  return refused_;
}

bool StreamSlots::WaitForRefused(uint64_t n, absl::Duration limit) const {
  absl::MutexLock lock(&mu_);
  auto reached = [this, n]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return refused_ >= n; };
  return mu_.AwaitWithTimeout(absl::Condition(&reached), limit);
}

TokenBucket::TokenBucket(Clock& clock, double rate_per_s, double burst)
    : clock_(clock),
      rate_per_ms_(rate_per_s / 1000.0),
      burst_(burst),
      tokens_(burst),
      last_ms_(clock.MonotonicMs()) {}

bool TokenBucket::TryTake() {
  const int64_t now = clock_.MonotonicMs();
  if (now > last_ms_) {
    tokens_ = std::min(burst_, tokens_ + static_cast<double>(now - last_ms_) * rate_per_ms_);
    last_ms_ = now;
  }
  if (tokens_ < 1.0) return false;
  tokens_ -= 1.0;
  return true;
}

}  // namespace blkbench
