// Deadline: the time by which a controller call must finish, on the controller's
// monotonic clock, checked between the steps of long work (reading results, listing,
// parsing a matrix) so a call stops instead of holding a thread past it.
#ifndef BLKBENCH_CONTROLLER_DEADLINE_H_
#define BLKBENCH_CONTROLLER_DEADLINE_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "common/clock.h"

namespace blkbench {

// Copyable; the clock must outlive every copy. Thread-compatible.
class Deadline {
 public:
  // No deadline: Check is always OK.
  Deadline() = default;
  // `budget_ms` from now on `clock`; `origin` says where the budget comes from, for the
  // error (e.g. "the controller's --unary_deadline_ms").
  Deadline(Clock& clock, int64_t budget_ms, std::string origin);

  // OK while time is left. Once it passed, DeadlineExceeded naming `step` (what the
  // call was about to do), the budget and its origin.
  absl::Status Check(absl::string_view step) const;

 private:
  Clock* clock_ = nullptr;  // null: no deadline
  int64_t budget_ms_ = 0;
  int64_t at_ms_ = 0;
  std::string origin_;
};

}  // namespace blkbench

#endif  // BLKBENCH_CONTROLLER_DEADLINE_H_
