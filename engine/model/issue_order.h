// IssueOrder: how far the order in which requests reach the driver departs from the
// order the elevator handed them out — Yu Kuai's 1-3-2-4 (seed 000): dispatchers t1 and
// t2 take rq1, rq2, rq3, rq4 in turn under the lock, then t1 issues rq1, rq3 and t2 rq2,
// rq4, so the disk sees 1-3-2-4 and the pair (rq2, rq3) is inverted. The measure is the
// number of such pairs (the Kendall distance between the two orders), counted as each
// request is issued: the requests handed out later but issued before it.
//
// Hand-out sequence numbers are 1, 2, 3, ... Requests handed out but not yet issued are
// few (a dispatch batch per CPU, plus those waiting on hctx->dispatch), so they are kept
// in a small sorted vector; counting is O(pending) per request.
#ifndef BLKBENCH_ENGINE_MODEL_ISSUE_ORDER_H_
#define BLKBENCH_ENGINE_MODEL_ISSUE_ORDER_H_

#include <algorithm>
#include <cstdint>
#include <vector>

namespace blkbench::engine {

class IssueOrder {
 public:
  // The elevator handed out request `seq` (the next number: seqs arrive in order).
  void HandedOut(uint64_t seq) { pending_.push_back(seq); }

  // Request `seq` reached the driver. Returns the pairs it completes the inversion of:
  // the requests handed out after it that were issued before it.
  uint64_t Issued(uint64_t seq) {
    const auto it = std::lower_bound(pending_.begin(), pending_.end(), seq);
    if (it == pending_.end() || *it != seq) return 0;  // not handed out (or counted)
    const auto pending_below = static_cast<uint64_t>(it - pending_.begin());
    pending_.erase(it);
    // Of the seq - 1 handed out before it, those neither pending nor withdrawn were
    // issued already; the issued ones beyond those came later.
    const uint64_t issued_below = seq - 1 - pending_below - WithdrawnBelow(seq);
    const uint64_t inverted = issued_ - issued_below;
    ++issued_;
    Fold();
    return inverted;
  }

  // Request `seq` went back into the elevator and will be handed out again under a new
  // number: under this one it is never issued.
  void Withdrawn(uint64_t seq) {
    const auto it = std::lower_bound(pending_.begin(), pending_.end(), seq);
    if (it == pending_.end() || *it != seq) return;
    pending_.erase(it);
    withdrawn_.insert(std::lower_bound(withdrawn_.begin(), withdrawn_.end(), seq), seq);
    Fold();
  }

  size_t pending() const { return pending_.size(); }

 private:
  uint64_t WithdrawnBelow(uint64_t seq) const {
    return withdrawn_folded_ +
           static_cast<uint64_t>(std::lower_bound(withdrawn_.begin(), withdrawn_.end(), seq) -
                                 withdrawn_.begin());
  }
  // A withdrawn number below every pending one is below every number still to be
  // issued: count it once and drop it.
  void Fold() {
    while (!withdrawn_.empty() && (pending_.empty() || withdrawn_.front() < pending_.front())) {
      withdrawn_.erase(withdrawn_.begin());
      ++withdrawn_folded_;
    }
  }

  std::vector<uint64_t> pending_;    // handed out, not yet issued (ascending)
  std::vector<uint64_t> withdrawn_;  // withdrawn above some pending number (ascending)
  uint64_t withdrawn_folded_ = 0;
  uint64_t issued_ = 0;
};

}  // namespace blkbench::engine

#endif  // BLKBENCH_ENGINE_MODEL_ISSUE_ORDER_H_
