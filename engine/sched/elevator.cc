// Elevator helpers shared by every scheduler: the teardown balance check of the
// inserted / dispatched / merged / completed counters.
#include "engine/sched/elevator.h"

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

}  // namespace blkbench::engine
