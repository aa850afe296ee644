// Elevator helpers shared by every scheduler: the teardown balance check of the
// inserted / dispatched / merged / completed counters, the default depth_updated, and
// the merge tail of blk_mq_sched_try_merge().
#include "engine/sched/elevator.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace blkbench::engine {

absl::Status ElevatorCounters::CheckBalanced(uint64_t still_queued) const {
  if (still_queued != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("elevator torn down with ", still_queued, " queued requests"));
  }
  if (dispatched + merged != inserted + reinserted) {
    return absl::InternalError(absl::StrCat("unbalanced: dispatched ", dispatched, " + merged ",
                                            merged, " != inserted ", inserted, " + reinserted ",
                                            reinserted));
  }
  if (completed != inserted) {
    return absl::FailedPreconditionError(
        absl::StrCat("unbalanced: completed ", completed, " != inserted ", inserted));
  }
  return absl::OkStatus();
}

std::optional<uint32_t> Elevator::MinShallowDepth() const {
  std::optional<uint32_t> min;
  for (const bool write : {false, true}) {
    for (const bool sync : {false, true}) {
      if (const std::optional<uint32_t> d = LimitDepth(write, sync)) {
        const uint32_t depth = std::max<uint32_t>(1, *d);
        min = min ? std::min(*min, depth) : depth;
      }
    }
  }
  return min;
}

BioMergeResult Elevator::ApplyBioMerge(BioMergeResult found, const SchedBio& bio) {
  BioMergeResult res = found;
  SchedRequest& rq = *res.rq;
  if (res.type == MergeType::kBack) {
    GrowBack(rq, bio.sectors);
    SchedRequest* next = LatterRequest(rq);
    if (next != nullptr && RqMergeOk(rq, *next)) {
      MergeRequests(rq, *next);
      res.freed = next;
    }
  } else if (res.type == MergeType::kFront) {
    rq.sector = bio.sector;
    rq.sectors += bio.sectors;
    RequestMerged(rq, MergeType::kFront);
    SchedRequest* prev = FormerRequest(rq);
    if (prev != nullptr && RqMergeOk(*prev, rq)) {
      MergeRequests(*prev, rq);
      res.freed = &rq;
      res.rq = prev;
    }
  }
  return res;
}

}  // namespace blkbench::engine
