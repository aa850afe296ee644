// A queued spinlock (qspinlock) modelled as a FIFO server whose schedule is computed
// analytically at acquisition time, with distance-dependent hand-offs and collapse.
#ifndef BLKBENCH_ENGINE_SIM_SPINLOCK_H_
#define BLKBENCH_ENGINE_SIM_SPINLOCK_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/sim/machine_profile.h"
#include "engine/sim/time.h"

namespace blkbench::engine {

struct LockGrant {
  SimTime granted = 0;   // when the caller holds the lock
  SimTime released = 0;  // when it unlocks (the critical section has run)
  SimTime spin_ns = 0;   // granted - now: time spent in queued_spin_lock_slowpath
  bool contended = false;
};

struct LockStats {
  uint64_t acquisitions = 0;
  uint64_t contended = 0;
  uint64_t failed_try = 0;
  SimTime spin_ns = 0;        // sum of LockGrant::spin_ns
  SimTime hold_ns = 0;        // sum of released - granted
  SimTime busy_ns = 0;        // server occupancy: hold + hand-off gaps
  double multiplier_sum = 0;  // sum of collapse multipliers over contended acquisitions

  double contended_share() const {
    return acquisitions == 0 ? 0.0 : static_cast<double>(contended) / acquisitions;
  }
  // Mean time the lock is occupied per acquisition: 1 / lock-bound acquisition rate.
  double cycle_ns() const {
    return acquisitions == 0 ? 0.0 : static_cast<double>(busy_ns) / acquisitions;
  }
};

// The model (ENGINE.md §8 "qspinlock model"):
//
//   * FIFO server. Callers must acquire in non-decreasing `now` order, which the DES
//     guarantees; a caller's grant is then fully determined at its arrival, so no
//     event is needed for the lock itself. Work before the lock is the caller's.
//   * Uncontended (the lock is free at `now`): granted = now,
//     hold = t_cs0 + lock_uncontended.
//   * Contended (held or queued at `now`): the lock passes from the previous holder's
//     CPU p to this CPU c. granted = previous release + t_h, with
//     t_h = handoff_transfers · x(p, c) (lock word + MCS node), and the holder misses
//     m protected lines last written on p: hold = t_cs0 + lock_uncontended + m · x(p, c),
//     x = MachineProfile::LineTransferNs.
//   * Collapse. Contended acquisitions' coherence cost (t_h and m · x) is multiplied by
//       M = 1 + (max_multiplier - 1) · g(ρ) · h(w),
//       g(ρ) = clamp((ρ - rho_onset) / (1 - rho_onset), 0, 1),  h(w) = w / (w + half_waiters)
//     where ρ is the lock's busy fraction averaged exponentially over window_ns and w
//     the number of waiters queued ahead at arrival. Why coherence only: collapse is
//     line ping-pong — every arriving waiter's xchg on the lock word (which shares lines
//     with the protected fields) and every spinner's read pulls lines away from the
//     holder, so each of its misses gets slower; the work itself does not. Why h(w): the
//     penalty must keep growing with the number of spinners, so that lock-bound
//     throughput falls as contexts are added rather than plateauing (a ρ-only rule
//     saturates as soon as ρ ≈ 1). Parameters come from MachineProfile::collapse.
//
// Not thread-safe. `profile` must outlive the lock.
class Spinlock {
 public:
  Spinlock(const MachineProfile& profile, LockCosts costs, std::string name);

  // Queues for the lock at `now` on `cpu` for a critical section of `cs_ns` of work.
  // REQUIRES: now >= every earlier call's now; cpu in [0, profile.cpus()).
  LockGrant Acquire(SimTime now, int cpu, SimTime cs_ns) {
    return Acquire(now, cpu, cs_ns, costs_.missed_lines);
  }
  // As above with a call-site-specific number of missed lines (e.g. a failed dispatch
  // that only reads the list heads).
  LockGrant Acquire(SimTime now, int cpu, SimTime cs_ns, double missed_lines);

  // spin_trylock: acquires (as Acquire) only if the lock is free at `now`; otherwise
  // counts a failed try and returns nullopt. A failed try still costs the caller
  // FailedTryNs(cpu) of CPU (reading the lock line).
  std::optional<LockGrant> TryAcquire(SimTime now, int cpu, SimTime cs_ns);
  SimTime FailedTryNs(int cpu) const;

  // spin_is_locked / spin_is_contended at `now` (held or queued).
  bool IsLocked(SimTime now) const { return free_at_ > now; }
  // Waiters queued (granted later than `now`); does not count the holder.
  int WaitersAt(SimTime now) const;

  // The collapse multiplier for `waiters` ahead at utilisation `rho` (see above).
  double CollapseMultiplier(double rho, int waiters) const;
  // The utilisation average as of the last acquisition.
  double utilisation() const { return rho_; }

  const std::string& name() const { return name_; }
  const LockStats& stats() const { return stats_; }
  SimTime free_at() const { return free_at_; }

 private:
  void UpdateUtilisation(SimTime now);
  void DropGrantedBefore(SimTime now);
  void PushGrant(SimTime granted);
  // profile_.LineTransferNs from the last holder's CPU to `cpu`.
  SimTime LineTransferNs(int cpu) const {
    return profile_.LineTransferNs(places_[static_cast<size_t>(last_cpu_)],
                                   places_[static_cast<size_t>(cpu)]);
  }

  const MachineProfile& profile_;
  LockCosts costs_;
  std::string name_;
  SimTime free_at_ = 0;  // release time of the last queued acquisition
  int last_cpu_ = 0;
  // Each CPU's place in the topology, for the hand-off's line transfer.
  std::vector<MachineProfile::CpuPlace> places_;
  SimTime last_update_ = 0;
  double rho_ = 0;
  // The last decay UpdateUtilisation computed: exp(-decay_gap_ / decay_tau_).
  SimTime decay_gap_ = 0;
  double decay_tau_ = 0;
  double decay_ = 1;
  // Grant times of queued acquisitions not yet granted as of the last call: a ring
  // buffer (capacity a power of two) so steady state does not allocate.
  std::vector<SimTime> grants_;
  size_t grants_head_ = 0;
  size_t grants_size_ = 0;
  LockStats stats_;
};

}  // namespace blkbench::engine

#endif  // BLKBENCH_ENGINE_SIM_SPINLOCK_H_
