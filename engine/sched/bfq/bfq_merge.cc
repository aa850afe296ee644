// Bfq: merging (bfq_bio_merge, bfq_request_merged, bfq_requests_merged, insert merges)
// and the end of a request's life (bfq_finish_requeue_request). Merges stay within the
// issuer's bfq_queue, as bfq_allow_bio_merge() requires for bios; the kernel's insert
// merge can cross queues through the elevator hash, which is not modelled.
#include <iterator>
#include <tuple>

#include "engine/sched/bfq/bfq.h"
#include "engine/sched/bfq/bfq_queue.h"

namespace blkbench::engine {

// The queue a bio would be queued to (bfqd->bio_bfqq), if it exists yet.
Bfq::Queue* Bfq::BioQueue(const SchedBio& bio) const {
  const bool sync = !bio.write || bio.sync;
  const auto cls = static_cast<uint32_t>(bio.ioprio);
  // Async bios only look for the default level (4) queue; SchedBio carries no level.
  const uint32_t level = bio.ioprio == IoprioClass::kIdle ? 7 : 4;
  auto it =
      queue_index_.find(std::tuple{bio.group, sync ? 1u : 0u, sync ? bio.ioc : cls * 8 + level});
  return it == queue_index_.end() ? nullptr : queues_[it->second].get();
}

// elv_bio_merge_ok() + bfq_allow_bio_merge(): no sync bio into an async request.
bool Bfq::MergeOk(const SchedRequest& rq, const SchedBio& bio) const {
  const bool bio_sync = !bio.write || bio.sync;
  const bool rq_sync = !rq.write || rq.sync;
  return Priv(rq).queued && !Priv(rq).on_dispatch_list && rq.write == bio.write &&
         rq.ioprio == bio.ioprio && (!bio_sync || rq_sync) &&
         rq.sectors + bio.sectors <= limits_.max_sectors;
}

// attempt_merge()'s checks for request + request, within one queue.
bool Bfq::RqMergeOk(const SchedRequest& rq, const SchedRequest& next) const {
  return Priv(rq).queue == Priv(next).queue && rq.write == next.write && rq.ioprio == next.ioprio &&
         rq.End() == next.sector && rq.sectors + next.sectors <= limits_.max_sectors;
}

SchedRequest* Bfq::LatterRequest(const SchedRequest& rq) const {  // elv_rb_latter_request()
  const Queue& q = *QueueOf(rq);
  auto it = q.sort_list.upper_bound(Key{Priv(rq).sort_sector, Priv(rq).seq});
  return it == q.sort_list.end() ? nullptr : it->second;
}

SchedRequest* Bfq::FormerRequest(const SchedRequest& rq) const {  // elv_rb_former_request()
  const Queue& q = *QueueOf(rq);
  auto it = q.sort_list.lower_bound(Key{Priv(rq).sort_sector, Priv(rq).seq});
  return it == q.sort_list.begin() ? nullptr : std::prev(it)->second;
}

// attempt_merge() → elv_merge_requests(): `next` is appended to `rq` and goes away.
void Bfq::MergeRequests(SchedRequest& rq, SchedRequest& next) {
  RequestsMerged(rq, next);
  next.merged_into = &rq;
  rq.sectors += next.sectors;
}

// bfq_requests_merged(): `rq` inherits an older FIFO deadline and next_rq from `next`.
void Bfq::RequestsMerged(SchedRequest& rq, SchedRequest& next) {
  ++counters_.merged;
  Queue* q = QueueOf(rq);
  if (q == nullptr) return;
  if (q == QueueOf(next) && Priv(rq).queued && Priv(next).queued &&
      next.fifo_time_ns < rq.fifo_time_ns) {
    // list_replace_init(): rq takes next's FIFO slot (RemoveRequest(next) then leaves
    // the slot alone because it no longer points at next).
    q->fifo.erase(Key{rq.fifo_time_ns, Priv(rq).fifo_seq});
    rq.fifo_time_ns = next.fifo_time_ns;
    Priv(rq).fifo_seq = Priv(next).fifo_seq;
    q->fifo[Key{rq.fifo_time_ns, Priv(rq).fifo_seq}] = &rq;
  }
  if (q->next_rq == &next) q->next_rq = &rq;
  if (Priv(next).queued) RemoveRequest(next);
}

// bfq_request_merged(): a front merge moved the start sector; re-sort and re-choose.
void Bfq::RequestMerged(SchedRequest& rq, MergeType type) {
  if (type != MergeType::kFront || !Priv(rq).queued || Priv(rq).on_dispatch_list) return;
  Queue& q = *QueueOf(rq);
  q.sort_list.erase(Key{Priv(rq).sort_sector, Priv(rq).seq});
  Priv(rq).sort_sector = rq.sector;
  q.sort_list.emplace(Key{rq.sector, Priv(rq).seq}, &rq);
  SchedRequest* prev = q.next_rq;
  q.next_rq = ChooseReq(q.next_rq, &rq, last_position_);
  if (prev != q.next_rq) UpdatedNextReq(q);
}

// elv_attempt_insert_merge(): append the new request to a queued one of its queue that
// ends where it starts, then keep folding backwards.
bool Bfq::TryInsertMerge(Queue& q, SchedRequest& rq, std::vector<SchedRequest*>& freed) {
  bool merged = false;
  SchedRequest* cur = &rq;
  for (;;) {
    auto it = q.sort_list.lower_bound(Key{cur->sector, 0});
    if (it == q.sort_list.begin()) break;
    SchedRequest* prev = std::prev(it)->second;
    if (prev == cur || !RqMergeOk(*prev, *cur)) break;
    MergeRequests(*prev, *cur);
    freed.push_back(cur);
    merged = true;
    cur = prev;
  }
  return merged;
}

// bfq_bio_merge() → blk_mq_sched_try_merge(): back merge onto a request of the bio's
// queue ending at the bio, else front merge (bfq_request_merge()); then try to merge
// the grown request with its neighbour (attempt_back_merge / attempt_front_merge).
BioMergeResult Bfq::BioMerge(const SchedBio& bio) {
  Queue* q = BioQueue(bio);
  if (q == nullptr || q->sort_list.empty()) return {};
  BioMergeResult res;
  auto it = q->sort_list.lower_bound(Key{bio.sector, 0});
  if (it != q->sort_list.begin()) {
    SchedRequest* prev = std::prev(it)->second;
    if (prev->End() == bio.sector && MergeOk(*prev, bio)) res = {MergeType::kBack, prev, nullptr};
  }
  if (res.type == MergeType::kNone) {
    auto f = q->sort_list.lower_bound(Key{bio.End(), 0});
    if (f != q->sort_list.end() && f->first.first == bio.End() && MergeOk(*f->second, bio)) {
      res = {MergeType::kFront, f->second, nullptr};
    }
  }
  if (res.type == MergeType::kNone) return res;
  ++counters_.bio_merges;
  return ApplyBioMerge(res, bio);
}

// bfq_finish_requeue_request() for a request being freed: drop it from its bic.
void Bfq::FinishRequest(SchedRequest& rq) {
  if (Priv(rq).queue != 0) {
    if (auto it = ioc_requests_.find(rq.ioc); it != ioc_requests_.end() && it->second > 0) {
      --it->second;
    }
    Priv(rq).queue = 0;
  }
  if (Priv(rq).counted) {
    Priv(rq).counted = false;
    ++counters_.completed;
  }
}

// bfq_finish_requeue_request() for a requeue: a started request counts as completed
// for bfq (at the last time bfq saw), and is re-attached when it is inserted again.
void Bfq::RequeueRequest(SchedRequest& rq) {
  if (Priv(rq).started) CompletedRequest(rq, last_now_ns_);
  if (Priv(rq).queue != 0) {
    if (auto it = ioc_requests_.find(rq.ioc); it != ioc_requests_.end() && it->second > 0) {
      --it->second;
    }
    Priv(rq).queue = 0;
  }
}

}  // namespace blkbench::engine
