// When a job may issue its next I/O: fio's rate / rate_iops / rate_process (backend.c
// usec_for_io and rate_ddir), thinktime after thinktime_blocks completions (handle_thinktime)
// and fsync after every fsync=N writes (should_fsync). Plain data; runs after fork().
#ifndef BLKBENCH_AGENT_EXECUTOR_PACING_H_
#define BLKBENCH_AGENT_EXECUTOR_PACING_H_

#include <algorithm>
#include <cstdint>

#include "common/resolved_job.h"
#include "common/rng.h"

namespace blkbench {

// A pause the loop takes once nothing is in flight (fio's io_u_quiesce before a think or
// a sync) or, for a rate, once the next I/O is not yet due.
class Pacer {
 public:
  Pacer(const ResolvedJob& j, uint64_t seed)
      : rated_((j.rate_bps[0] | j.rate_bps[1] | j.rate_iops[0] | j.rate_iops[1]) != 0),
        poisson_(j.rate_poisson),
        think_ns_(j.thinktime_ns),
        spin_ns_(j.thinktime_spin_ns),
        think_blocks_(j.thinktime_blocks),
        fsync_blocks_(j.fsync_blocks),
        rng_(seed ^ 0x9a7e5eed5eedULL) {
    for (int d = 0; d < 2; ++d) {
      bps_[d] = j.rate_bps[d];
      iops_[d] = j.rate_iops[d];
    }
  }

  // Anything to pace at all; when false the loop never asks.
  bool active() const { return rated_ || think_ns_ != 0 || fsync_blocks_ != 0; }
  // The schedule starts with the job's first I/O.
  void Start(uint64_t now_ns) { due_[0] = due_[1] = now_ns; }

  // No I/O while a think or sync waits for the queue to drain, none past thinktime_blocks
  // issued since the last think (fio: thinktime_blocks caps the queue depth), and none
  // before its rate's due time.
  bool MayIssue(bool write, uint64_t now_ns) const {
    return !think_pending_ && !sync_pending_ && now_ns >= due_[write] &&
           (think_ns_ == 0 || issued_since_think_ < think_blocks_);
  }
  uint64_t due(bool write) const { return due_[write]; }
  bool think_pending() const { return think_pending_; }
  bool sync_pending() const { return sync_pending_; }
  uint64_t think_ns() const { return think_ns_; }
  uint64_t spin_ns() const { return spin_ns_; }

  // fio usec_for_io: the next I/O of this direction is due one interval later — the
  // longer of len/rate and 1/rate_iops — or, for rate_process=poisson, an exponentially
  // distributed interval with that mean. A job that fell behind catches up, as fio's does.
  void Issued(bool write, uint32_t len) {
    if (rated_) {
      uint64_t interval = 0;
      if (bps_[write] != 0) {
        interval = static_cast<uint64_t>(static_cast<unsigned __int128>(len) * 1'000'000'000u /
                                         bps_[write]);
      }
      if (iops_[write] != 0) interval = std::max<uint64_t>(interval, 1'000'000'000u / iops_[write]);
      if (poisson_ && interval != 0) {
        interval = static_cast<uint64_t>(rng_.Exponential(static_cast<double>(interval)));
      }
      due_[write] += interval;
    }
    if (think_ns_ != 0) ++issued_since_think_;
    if (write && fsync_blocks_ != 0 && ++writes_ >= fsync_blocks_) {
      writes_ = 0;
      sync_pending_ = true;
    }
  }
  // fio thinktime_blocks_type=complete: think after every thinktime_blocks completions.
  void Completed() {
    if (think_ns_ != 0 && ++completed_ >= think_blocks_) {
      completed_ = 0;
      think_pending_ = true;
    }
  }
  void ThinkDone() {
    think_pending_ = false;
    issued_since_think_ = 0;
  }
  void SyncDone() { sync_pending_ = false; }

 private:
  bool rated_, poisson_;
  uint64_t think_ns_, spin_ns_;
  uint32_t think_blocks_, fsync_blocks_;
  uint64_t bps_[2] = {0, 0}, iops_[2] = {0, 0};
  uint64_t due_[2] = {0, 0};
  uint32_t writes_ = 0, completed_ = 0, issued_since_think_ = 0;
  bool think_pending_ = false, sync_pending_ = false;
  Rng rng_;
};

}  // namespace blkbench

#endif  // BLKBENCH_AGENT_EXECUTOR_PACING_H_
