// The queued-spinlock model: FIFO schedule, hand-off and miss costs, collapse.
#include "engine/sim/spinlock.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <utility>

namespace blkbench::engine {
namespace {

// std::llround(x) without the libm call (GCC inlines it only under -fno-math-errno):
// for 0 <= x < 2^52, x - trunc(x) is exact, so this rounds half away from zero exactly
// as llround does; anything else goes to llround.
int64_t LlroundFast(double x) {
  if (!(x >= 0 && x < 0x1p52)) return std::llround(x);
  const auto t = static_cast<int64_t>(x);
  return x - static_cast<double>(t) >= 0.5 ? t + 1 : t;
}

}  // namespace

Spinlock::Spinlock(const MachineProfile& profile, LockCosts costs, std::string name)
    : profile_(profile), costs_(costs), name_(std::move(name)), grants_(16) {
  places_.reserve(static_cast<size_t>(profile.cpus()));
  for (int cpu = 0; cpu < profile.cpus(); ++cpu) places_.push_back(profile.PlaceOf(cpu));
}

double Spinlock::CollapseMultiplier(double rho, int waiters) const {
  const CollapseParams& c = profile_.collapse;
  double g = std::clamp((rho - c.rho_onset) / (1.0 - c.rho_onset), 0.0, 1.0);
  double w = static_cast<double>(waiters);
  double h = w + c.half_waiters > 0 ? w / (w + c.half_waiters) : 0.0;
  return 1.0 + (c.max_multiplier - 1.0) * g * h;
}

// ρ(t) = (1/τ) ∫ busy(s) e^{-(t-s)/τ} ds. After every acquisition the lock is busy
// without a gap from that acquisition's time until free_at_, so the busy part of
// (last_update_, now] is exactly (last_update_, min(free_at_, now)].
void Spinlock::UpdateUtilisation(SimTime now) {
  if (now <= last_update_) return;
  const double tau = static_cast<double>(profile_.collapse.window_ns);
  // exp() is pure, and a lock-bound run repeats the gap between arrivals (about half of
  // seed 000's), so the last one's decay is kept.
  const SimTime gap = now - last_update_;
  if (gap != decay_gap_ || tau != decay_tau_) {
    decay_gap_ = gap;
    decay_tau_ = tau;
    decay_ = std::exp(-static_cast<double>(gap) / tau);
  }
  const double decay = decay_;
  rho_ *= decay;
  SimTime busy_end = std::min(free_at_, now);
  if (busy_end > last_update_) {
    // exp(-0) is exactly 1: no call while the lock is still busy at `now`.
    const double busy_tail =
        busy_end == now ? 1.0 : std::exp(-static_cast<double>(now - busy_end) / tau);
    rho_ += busy_tail - decay;
  }
  last_update_ = now;
}

void Spinlock::DropGrantedBefore(SimTime now) {
  const size_t mask = grants_.size() - 1;
  while (grants_size_ > 0 && grants_[grants_head_] <= now) {
    grants_head_ = (grants_head_ + 1) & mask;
    --grants_size_;
  }
}

void Spinlock::PushGrant(SimTime granted) {
  if (grants_size_ == grants_.size()) {
    std::vector<SimTime> bigger(grants_.size() * 2);
    for (size_t i = 0; i < grants_size_; ++i) {
      bigger[i] = grants_[(grants_head_ + i) & (grants_.size() - 1)];
    }
    grants_ = std::move(bigger);
    grants_head_ = 0;
  }
  grants_[(grants_head_ + grants_size_) & (grants_.size() - 1)] = granted;
  ++grants_size_;
}

int Spinlock::WaitersAt(SimTime now) const {
  int n = 0;
  for (size_t i = 0; i < grants_size_; ++i) {
    if (grants_[(grants_head_ + i) & (grants_.size() - 1)] > now) ++n;
  }
  return n;
}

LockGrant Spinlock::Acquire(SimTime now, int cpu, SimTime cs_ns, double missed_lines) {
  assert(now >= last_update_);
  assert(cpu >= 0 && cpu < profile_.cpus());
  UpdateUtilisation(now);
  DropGrantedBefore(now);
  LockGrant grant;
  const SimTime work = cs_ns + profile_.coherence.lock_uncontended;
  SimTime busy_from = now;
  if (free_at_ <= now) {
    grant.granted = now;
    grant.released = now + work;
  } else {
    grant.contended = true;
    busy_from = free_at_;
    const double x = static_cast<double>(LineTransferNs(cpu));
    const double m = CollapseMultiplier(rho_, static_cast<int>(grants_size_));
    const auto handoff = static_cast<SimTime>(LlroundFast(profile_.handoff_transfers * x * m));
    const auto misses = static_cast<SimTime>(LlroundFast(missed_lines * x * m));
    grant.granted = free_at_ + handoff;
    grant.released = grant.granted + work + misses;
    stats_.multiplier_sum += m;
    ++stats_.contended;
  }
  grant.spin_ns = grant.granted - now;
  free_at_ = grant.released;
  last_cpu_ = cpu;
  if (grant.granted > now) PushGrant(grant.granted);
  ++stats_.acquisitions;
  stats_.spin_ns += grant.spin_ns;
  stats_.hold_ns += grant.released - grant.granted;
  stats_.busy_ns += grant.released - busy_from;
  return grant;
}

std::optional<LockGrant> Spinlock::TryAcquire(SimTime now, int cpu, SimTime cs_ns) {
  if (IsLocked(now)) {
    ++stats_.failed_try;
    return std::nullopt;
  }
  return Acquire(now, cpu, cs_ns);
}

SimTime Spinlock::FailedTryNs(int cpu) const { return LineTransferNs(cpu); }

}  // namespace blkbench::engine
