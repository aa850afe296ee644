// MqDeadline: the unlocked bodies of block/mq-deadline.c's elevator_mq_ops. Each
// function cites the kernel function it mirrors; the caller charges dd->lock around them.
#include "engine/sched/mq_deadline/mq_deadline.h"

#include <algorithm>
#include <cassert>
#include <iterator>

namespace blkbench::engine {

DeadlineProfile DeadlineProfile::ForKernel(int major, int minor) {
  const int v = major * 100 + minor;
  DeadlineProfile p;
  p.prio_levels = v >= 514;
  p.prio_aging = v >= 600;
  p.latest_pos_cursor = v >= 605;
  p.async_depth = v < 514   ? DdAsyncDepthRule::kNone
                  : v < 610 ? DdAsyncDepthRule::kThreeQuartersPerWord
                            : DdAsyncDepthRule::kNrRequests;
  return p;
}

MqDeadline::MqDeadline(DeadlineProfile profile, DeadlineTunables tunables)
    : profile_(profile), tunables_(tunables) {}

// dd_init_sched() + dd_depth_updated().
absl::Status MqDeadline::Init(const ElevatorQueueLimits& limits) {
  if (limits.nr_requests == 0) return absl::InvalidArgumentError("nr_requests must be > 0");
  // The kernel takes fifo_batch 0 (no request continues a batch) but nothing negative.
  if (tunables_.fifo_batch < 0) return absl::InvalidArgumentError("fifo_batch must be >= 0");
  limits_ = limits;
  rq_data_.Reserve(size_t{limits.nr_requests} * std::max<uint32_t>(1, limits.nr_hw_queues));
  last_dir_ = kWrite;  // dd->last_dir = DD_WRITE
  switch (profile_.async_depth) {
    case DdAsyncDepthRule::kNone:
      async_depth_ = 0;
      break;
    case DdAsyncDepthRule::kThreeQuartersPerWord:
      async_depth_ = std::max<uint32_t>(1, 3 * limits.nr_requests / 4);
      break;
    case DdAsyncDepthRule::kNrRequests:
      async_depth_ = limits.nr_requests;
      break;
  }
  depth_updated_async_depth_ = async_depth_;
  // deadline_async_depth_store() after the switch: the limit, not the wake batch.
  if (async_depth_ != 0 && tunables_.async_depth != 0) async_depth_ = tunables_.async_depth;
  return absl::OkStatus();
}

// dd_exit_sched(): WARN if anything is still queued, then the stats must balance.
absl::Status MqDeadline::Exit() { return counters_.CheckBalanced(queued_ + staged_.size()); }

// dd_depth_updated() -> sbitmap_queue_min_shallow_depth(): 5.14-6.9 pass async_depth
// (wake_batch stays 8 for 64 tags); 6.10+ pass 1, so wake_batch becomes 1.
std::optional<uint32_t> MqDeadline::MinShallowDepth() const {
  if (depth_updated_async_depth_ == 0) return Elevator::MinShallowDepth();
  return profile_.async_depth == DdAsyncDepthRule::kNrRequests ? 1u : depth_updated_async_depth_;
}

// dd-serialize-dispatch (Axboe 2024): test_bit(DD_DISPATCHING) in dd_dispatch_request().
std::optional<uint64_t> MqDeadline::DispatchingUntil(uint64_t now_ns) const {
  if (!profile_.serialize_dispatch || now_ns >= dispatching_until_) return std::nullopt;
  return dispatching_until_;
}

void MqDeadline::DispatchLockReleased(uint64_t release_ns) {
  if (profile_.serialize_dispatch) dispatching_until_ = release_ns;
}

// dd-insert-lists: dd_insert_requests() only adds to the insertion list (its own lock);
// dd_dispatch_request() splices it into the trees under dd->lock.
void MqDeadline::StageRequests(std::span<SchedRequest* const> rqs) {
  staged_.insert(staged_.end(), rqs.begin(), rqs.end());
}

size_t MqDeadline::SortStaged(uint64_t now_ns, std::vector<SchedRequest*>& freed) {
  if (staged_.empty()) return 0;
  sorting_.swap(staged_);
  InsertRequests(sorting_, InsertFlags{}, now_ns, freed);
  const size_t n = sorting_.size();
  sorting_.clear();
  return n;
}

// ioprio_class_to_prio[]; before 5.14 there is a single level.
int MqDeadline::PrioOf(IoprioClass c) const {
  return profile_.prio_levels ? static_cast<int>(c) : static_cast<int>(IoprioClass::kBe);
}

// dd_limit_depth(): sync reads are never throttled; everything else gets
// shallow_depth = dd->async_depth (interpreted per sbitmap word by the tag code).
std::optional<uint32_t> MqDeadline::LimitDepth(bool write, bool sync) const {
  if (profile_.async_depth == DdAsyncDepthRule::kNone) return std::nullopt;
  if (sync && !write) return std::nullopt;
  return async_depth_;
}

// ---- sort tree, FIFO and hash (deadline_add_rq_rb, deadline_del_rq_rb, elv_rqhash_*) ----

void MqDeadline::AddRqRb(PerPrio& pp, SchedRequest& rq) {
  Priv(rq).sort_sector = rq.sector;
  pp.sort_list[Dir(rq)].emplace(SortKey{rq.sector, Priv(rq).seq}, &rq);
}

void MqDeadline::DelRqRb(PerPrio& pp, SchedRequest& rq) {
  const int dir = Dir(rq);
  // < 6.5: deadline_del_rq_rb() advances next_rq past the removed request.
  if (pp.next_rq[dir] == &rq) pp.next_rq[dir] = LatterRequest(rq);
  pp.sort_list[dir].erase(SortKey{Priv(rq).sort_sector, Priv(rq).seq});
}

void MqDeadline::HashAdd(SchedRequest& rq) {
  Priv(rq).hash_end = rq.End();
  Priv(rq).hashed = true;
  hash_.Add(Priv(rq).hash_end, Priv(rq).seq, &rq);
}

void MqDeadline::HashDel(SchedRequest& rq) {
  if (!Priv(rq).hashed) return;
  hash_.Del(Priv(rq).hash_end, Priv(rq).seq);
  Priv(rq).hashed = false;
}

// elv_rqhash_find(): the kernel's bucket lists the newest request first.
SchedRequest* MqDeadline::HashFind(uint64_t end_sector) const { return hash_.Find(end_sector); }

// elv_rb_latter_request() / elv_rb_former_request() within the request's own tree.
SchedRequest* MqDeadline::LatterRequest(const SchedRequest& rq) const {
  const auto& tree = per_prio_[PrioOf(rq.ioprio)].sort_list[Dir(rq)];
  auto it = tree.upper_bound(SortKey{Priv(rq).sort_sector, Priv(rq).seq});
  return it == tree.end() ? nullptr : it->second;
}

SchedRequest* MqDeadline::FormerRequest(const SchedRequest& rq) const {
  const auto& tree = per_prio_[PrioOf(rq.ioprio)].sort_list[Dir(rq)];
  auto it = tree.lower_bound(SortKey{Priv(rq).sort_sector, Priv(rq).seq});
  return it == tree.begin() ? nullptr : std::prev(it)->second;
}

// deadline_remove_request(): off the FIFO (or dispatch list), the tree and the hash.
void MqDeadline::RemoveRequest(PerPrio& pp, SchedRequest& rq) {
  if (!Priv(rq).queued) return;
  if (Priv(rq).on_dispatch_list) {
    pp.dispatch.erase(std::find(pp.dispatch.begin(), pp.dispatch.end(), &rq));
    Priv(rq).on_dispatch_list = false;
  } else {
    pp.fifo_list[Dir(rq)].erase(FifoKey{rq.fifo_time_ns, Priv(rq).fifo_seq});
    DelRqRb(pp, rq);
  }
  HashDel(rq);
  if (last_merge_ == &rq) last_merge_ = nullptr;
  Priv(rq).queued = false;
  --queued_;
}

// deadline_move_request(): about to be dispatched.
void MqDeadline::MoveRequest(PerPrio& pp, SchedRequest& rq) {
  if (!profile_.latest_pos_cursor) {
    pp.next_rq = {nullptr, nullptr};
    pp.next_rq[Dir(rq)] = LatterRequest(rq);
  }
  RemoveRequest(pp, rq);
}

// deadline_next_request(): 6.5+ deadline_from_pos(latest_pos); before, next_rq[dir].
SchedRequest* MqDeadline::NextRequest(PerPrio& pp, int dir) const {
  if (!profile_.latest_pos_cursor) return pp.next_rq[dir];
  const auto& tree = pp.sort_list[dir];
  auto it = tree.lower_bound(SortKey{pp.latest_pos[dir], 0});
  return it == tree.end() ? nullptr : it->second;
}

// deadline_fifo_request(): the oldest request of this direction.
SchedRequest* MqDeadline::FifoRequest(const PerPrio& pp, int dir) const {
  const auto& fifo = pp.fifo_list[dir];
  return fifo.empty() ? nullptr : fifo.begin()->second;
}

// deadline_check_fifo(): has the oldest request's deadline passed?
bool MqDeadline::CheckFifo(const PerPrio& pp, int dir, uint64_t now_ns) const {
  const SchedRequest* rq = FifoRequest(pp, dir);
  return rq != nullptr && now_ns >= rq->fifo_time_ns;
}

bool MqDeadline::HasWorkForPrio(const PerPrio& pp) const {  // dd_has_work_for_prio()
  return !pp.dispatch.empty() || !pp.fifo_list[kRead].empty() || !pp.fifo_list[kWrite].empty();
}

bool MqDeadline::HasWork() const {  // dd_has_work()
  return !staged_.empty() || std::any_of(per_prio_.begin(), per_prio_.end(),
                                         [this](const PerPrio& pp) { return HasWorkForPrio(pp); });
}

// ---- dispatch ----

// __dd_dispatch_request(). latest_start_ns: requests submitted after it are not
// eligible (started_after()); like the kernel, the batch/direction state is updated
// before that check.
SchedRequest* MqDeadline::DispatchFromPrio(PerPrio& pp, uint64_t now_ns, int64_t latest_start_ns) {
  auto started_after = [latest_start_ns](const SchedRequest& rq) {
    return static_cast<int64_t>(rq.submit_time_ns) > latest_start_ns;
  };
  SchedRequest* rq = nullptr;
  int dir = kRead;

  if (!pp.dispatch.empty()) {
    rq = pp.dispatch.front();
    if (started_after(*rq)) return nullptr;
    dir = Dir(*rq);
    RemoveRequest(pp, *rq);
  } else {
    // Batches are reads XOR writes: continue the current one while entitled.
    rq = NextRequest(pp, last_dir_);
    if (rq == nullptr || batching_ >= tunables_.fifo_batch) {
      // Not in a batch: choose a direction. Reads win unless writes starved.
      if (!pp.fifo_list[kRead].empty()) {
        dir = kRead;
        // dd->starved++ >= dd->writes_starved compares unsigned: a negative writes_starved
        // (the attribute takes INT_MIN..INT_MAX) starves writes all but for ever.
        if (FifoRequest(pp, kWrite) != nullptr &&
            starved_++ >= static_cast<unsigned>(tunables_.writes_starved)) {
          dir = kWrite;
        }
      } else if (!pp.fifo_list[kWrite].empty()) {
        dir = kWrite;
      } else {
        return nullptr;
      }
      if (dir == kWrite) starved_ = 0;
      // dispatch_find_request: FIFO head if expired or the cursor ran out.
      SchedRequest* next_rq = NextRequest(pp, dir);
      rq = (CheckFifo(pp, dir, now_ns) || next_rq == nullptr) ? FifoRequest(pp, dir) : next_rq;
      if (rq == nullptr) return nullptr;
      last_dir_ = dir;
      batching_ = 0;
    }
    dir = Dir(*rq);
    if (started_after(*rq)) return nullptr;
    ++batching_;
    MoveRequest(pp, *rq);
  }
  // done: record the cursor and stats on the request's own level.
  PerPrio& own = PrioFor(*rq);
  own.latest_pos[dir] = rq->sector;
  ++own.stats.dispatched;
  ++counters_.dispatched;
  return rq;
}

// dd_dispatch_prio_aged_requests(): with two or more levels busy, serve BE/IDLE
// requests that have waited longer than prio_aging_expire.
SchedRequest* MqDeadline::DispatchPrioAged(uint64_t now_ns) {
  int prio_cnt = 0;
  for (const PerPrio& pp : per_prio_) prio_cnt += HasWorkForPrio(pp) ? 1 : 0;
  if (prio_cnt < 2) return nullptr;
  const int64_t latest_start =
      static_cast<int64_t>(now_ns) - static_cast<int64_t>(tunables_.prio_aging_expire_ns);
  for (int prio = static_cast<int>(IoprioClass::kBe); prio < kDdNumPrios; ++prio) {
    if (SchedRequest* rq = DispatchFromPrio(per_prio_[prio], now_ns, latest_start)) return rq;
  }
  return nullptr;
}

// dd_dispatch_request(): aged requests first, then RT → BE → IDLE; a level with
// requests queued or in flight (dd_queued()) blocks the levels below it.
SchedRequest* MqDeadline::DispatchRequest(uint64_t now_ns) {
  if (profile_.prio_aging) {
    if (SchedRequest* rq = DispatchPrioAged(now_ns)) return rq;
  }
  for (PerPrio& pp : per_prio_) {
    SchedRequest* rq = DispatchFromPrio(pp, now_ns, static_cast<int64_t>(now_ns));
    if (rq != nullptr || pp.stats.Queued() != 0) return rq;
  }
  return nullptr;
}

// ---- insertion ----

// dd_insert_requests(): the whole list under one dd->lock hold.
void MqDeadline::InsertRequests(std::span<SchedRequest* const> rqs, InsertFlags flags,
                                uint64_t now_ns, std::vector<SchedRequest*>& freed) {
  for (SchedRequest* rq : rqs) InsertRequest(*rq, flags, now_ns, freed);
}

// dd_insert_request().
void MqDeadline::InsertRequest(SchedRequest& rq, InsertFlags flags, uint64_t now_ns,
                               std::vector<SchedRequest*>& freed) {
  assert(!Priv(rq).queued);
  PerPrio& pp = PrioFor(rq);
  if (!Priv(rq).counted) {  // Priv(*rq).priv[0]: count each request once
    Priv(rq).counted = true;
    ++pp.stats.inserted;
    ++counters_.inserted;
  } else {
    ++counters_.reinserted;
  }
  if (TryInsertMerge(rq, freed)) return;

  Priv(rq).seq = next_seq_++;
  Priv(rq).queued = true;
  ++queued_;
  if (flags.at_head) {
    pp.dispatch.push_front(&rq);
    Priv(rq).on_dispatch_list = true;
    rq.fifo_time_ns = now_ns;
    return;
  }
  AddRqRb(pp, rq);
  HashAdd(rq);
  if (last_merge_ == nullptr) last_merge_ = &rq;
  rq.fifo_time_ns = now_ns + (rq.write ? tunables_.write_expire_ns : tunables_.read_expire_ns);
  Priv(rq).fifo_seq = Priv(rq).seq;
  pp.fifo_list[Dir(rq)].emplace(FifoKey{rq.fifo_time_ns, Priv(rq).fifo_seq}, &rq);
}

// elv_attempt_insert_merge(): append `rq` to a queued request that ends where it
// starts, then keep folding the result backwards while the hash finds neighbours.
bool MqDeadline::TryInsertMerge(SchedRequest& rq, std::vector<SchedRequest*>& freed) {
  bool merged = false;
  SchedRequest* cur = &rq;
  for (;;) {
    SchedRequest* prev = HashFind(cur->sector);
    if (prev == nullptr || prev == cur || !RqMergeOk(*prev, *cur)) break;
    MergeRequests(*prev, *cur);
    freed.push_back(cur);
    merged = true;
    cur = prev;
  }
  return merged;
}

// ---- merging ----

// blk_rq_merge_ok() reduced to what the model carries: direction, ioprio, size.
bool MqDeadline::BioMergeOk(const SchedRequest& rq, const SchedBio& bio) const {
  return Priv(rq).queued && !Priv(rq).on_dispatch_list && rq.write == bio.write &&
         rq.ioprio == bio.ioprio && rq.sectors + bio.sectors <= limits_.max_sectors;
}

// attempt_merge()'s checks for request + request.
bool MqDeadline::RqMergeOk(const SchedRequest& rq, const SchedRequest& next) const {
  return rq.write == next.write && rq.ioprio == next.ioprio && rq.End() == next.sector &&
         rq.sectors + next.sectors <= limits_.max_sectors;
}

// bio_attempt_back_merge() with elv_rqhash_reposition().
void MqDeadline::GrowBack(SchedRequest& rq, uint32_t sectors) {
  HashDel(rq);
  rq.sectors += sectors;
  HashAdd(rq);
}

// attempt_merge() → elv_merge_requests(): `next` is appended to `rq` and goes away.
void MqDeadline::MergeRequests(SchedRequest& rq, SchedRequest& next) {
  const bool rq_queued = Priv(rq).queued;
  if (rq_queued) HashDel(rq);
  RequestsMerged(rq, next);
  next.merged_into = &rq;
  rq.sectors += next.sectors;
  if (rq_queued) HashAdd(rq);  // elv_rqhash_reposition()
  last_merge_ = &rq;
}

// dd_merged_requests(): `rq` inherits an earlier deadline (and FIFO slot) from `next`.
void MqDeadline::RequestsMerged(SchedRequest& rq, SchedRequest& next) {
  PerPrio& pp = PrioFor(next);
  ++pp.stats.merged;
  ++counters_.merged;
  const bool both_on_fifo = Priv(rq).queued && !Priv(rq).on_dispatch_list && Priv(next).queued &&
                            !Priv(next).on_dispatch_list;
  if (both_on_fifo && next.fifo_time_ns < rq.fifo_time_ns) {
    PerPrio& rq_pp = PrioFor(rq);
    rq_pp.fifo_list[Dir(rq)].erase(FifoKey{rq.fifo_time_ns, Priv(rq).fifo_seq});
    rq.fifo_time_ns = next.fifo_time_ns;
    Priv(rq).fifo_seq = Priv(next).fifo_seq;
    RemoveRequest(pp, next);
    rq_pp.fifo_list[Dir(rq)].emplace(FifoKey{rq.fifo_time_ns, Priv(rq).fifo_seq}, &rq);
    return;
  }
  RemoveRequest(pp, next);
}

// dd_request_merged(): a front merge moved the start sector, so re-sort the request.
void MqDeadline::RequestMerged(SchedRequest& rq, MergeType type) {
  if (type != MergeType::kFront || !Priv(rq).queued || Priv(rq).on_dispatch_list) return;
  PerPrio& pp = PrioFor(rq);
  pp.sort_list[Dir(rq)].erase(SortKey{Priv(rq).sort_sector, Priv(rq).seq});
  AddRqRb(pp, rq);
}

// dd_bio_merge() → blk_mq_sched_try_merge() → elv_merge(): last_merge, then the
// back-merge hash, then dd_request_merge()'s front-merge lookup in the sort tree.
// A successful merge then tries attempt_back_merge()/attempt_front_merge().
BioMergeResult MqDeadline::BioMerge(const SchedBio& bio) {
  BioMergeResult res;
  if (last_merge_ != nullptr && BioMergeOk(*last_merge_, bio)) {
    if (last_merge_->End() == bio.sector) {
      res = {MergeType::kBack, last_merge_, nullptr};
    } else if (last_merge_->sector == bio.End()) {  // blk_try_merge() ignores front_merges
      res = {MergeType::kFront, last_merge_, nullptr};
    }
  }
  if (res.type == MergeType::kNone) {
    SchedRequest* rq = HashFind(bio.sector);
    if (rq != nullptr && BioMergeOk(*rq, bio)) res = {MergeType::kBack, rq, nullptr};
  }
  if (res.type == MergeType::kNone && tunables_.front_merges) {
    const auto& tree = per_prio_[PrioOf(bio.ioprio)].sort_list[bio.write ? kWrite : kRead];
    auto it = tree.lower_bound(SortKey{bio.End(), 0});  // elv_rb_find(bio_end_sector)
    if (it != tree.end() && it->first.first == bio.End() && BioMergeOk(*it->second, bio)) {
      res = {MergeType::kFront, it->second, nullptr};
    }
  }
  if (res.type == MergeType::kNone) return res;

  ++counters_.bio_merges;
  res = ApplyBioMerge(res, bio);
  last_merge_ = res.rq;  // elv_merged_request(): q->last_merge = rq
  return res;
}

// dd_finish_request(): count completion of requests dd inserted.
void MqDeadline::FinishRequest(SchedRequest& rq) {
  if (!Priv(rq).counted) return;
  Priv(rq).counted = false;
  ++PrioFor(rq).stats.completed;
  ++counters_.completed;
}

namespace {

// mq-deadline (block/mq-deadline.c) of the kernel's era, with seed 000's and 002's patches
// and the cell's deadline_attrs[] values.
std::unique_ptr<Elevator> CreateMqDeadline(const ElevatorSetup& setup) {
  DeadlineProfile p = DeadlineProfile::ForKernel(setup.kernel_major, setup.kernel_minor);
  p.batch_dispatch = setup.HasPatch("dd-batch-dispatch");
  p.serialize_dispatch = setup.HasPatch("dd-serialize-dispatch");
  p.insert_lists = setup.HasPatch("dd-insert-lists");
  DeadlineTunables t;
  setup.SetNs("read_expire", kNsPerMs, t.read_expire_ns);
  setup.SetNs("write_expire", kNsPerMs, t.write_expire_ns);
  setup.SetInt("writes_starved", t.writes_starved);
  setup.SetInt("front_merges", t.front_merges);
  setup.SetInt("fifo_batch", t.fifo_batch);
  setup.SetUint("async_depth", t.async_depth);
  setup.SetNs("prio_aging_expire", kNsPerMs, t.prio_aging_expire_ns);
  return std::make_unique<MqDeadline>(p, t);
}

// mq-deadline (block/mq-deadline.c, 6.x), with a few requests queued (rb depth ~2):
// - bio_merge: q->last_merge, a hash bucket, the sort-list root and dd's line holding
//   front_merges (false-shared with batching/starved, written by every dispatch), plus
//   the rb walk (2 lines per visited request of another task): 8.
// - insert: the fifo heads/stats, sort root and fifo_expire lines of dd, q->last_merge,
//   two hash buckets, the previous fifo tail, the rb walk: 10; each further request of
//   the plug batch a new hash bucket and some rebalancing: 1.5.
// - dispatch: dd's three written lines, the rb walk to a leaf, the chosen request's
//   queuelist and fifo_time lines, fifo neighbours, rebalancing, its hash bucket,
//   q->last_merge: 11; each further request of a batch its own lines: 3.5; one that
//   finds nothing reads dd's three lines: 3. No lock at completion.
constexpr LockSiteLines kDeadlineLines = {.merge = 8,
                                          .insert_first = 10,
                                          .insert_extra = 1.5,
                                          .dispatch_first = 11,
                                          .dispatch_extra = 3.5,
                                          .dispatch_empty = 3};

}  // namespace

const ElevatorType& MqDeadlineType() {
  static const ElevatorType* const kType = new ElevatorType{
      .name = "mq-deadline",
      .create = &CreateMqDeadline,
      .lock_name = "dd->lock",
      .insert_lock_name = "dd->insert_lock",
      .lines = kDeadlineLines,
      .patches = {"dd-batch-dispatch", "dd-serialize-dispatch", "dd-insert-lists"},
      .tunables = {"read_expire", "write_expire", "writes_starved", "front_merges", "fifo_batch",
                   "async_depth", "prio_aging_expire"},
  };
  return *kType;
}

}  // namespace blkbench::engine
