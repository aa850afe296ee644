// Call deadlines on the controller's clock; see deadline.h.
#include "controller/deadline.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace blkbench {

Deadline::Deadline(Clock& clock, int64_t budget_ms, std::string origin)
    : clock_(&clock),
      budget_ms_(budget_ms),
      at_ms_(clock.MonotonicMs() + budget_ms),
      origin_(std::move(origin)) {}

absl::Status Deadline::Check(absl::string_view step) const {
  if (clock_ == nullptr) return absl::OkStatus();
  const int64_t now = clock_->MonotonicMs();
  if (now < at_ms_) return absl::OkStatus();
  return absl::DeadlineExceededError(
      absl::StrCat("the call's deadline of ", budget_ms_, " ms (", origin_, ") passed ",
                   now - at_ms_, " ms ago, before ", step, "; nothing more was done"));
}

}  // namespace blkbench
