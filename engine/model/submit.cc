// The submission path of blk-mq without an elevator: blk_mq_submit_bio for one split
// piece at a time, request/tag allocation (__blk_mq_alloc_requests, blk_mq_get_tag) and
// the plug (blk_add_rq_to_plug, blk_mq_flush_plug_list, blk_finish_plug).
#include <algorithm>
#include <optional>

#include "engine/model/completion.h"
#include "engine/model/hw_queues.h"
#include "engine/model/measurements.h"
#include "engine/model/sched_path.h"
#include "engine/model/submission.h"
#include "engine/model/tracer.h"

namespace blkbench::engine {

// blk_mq_submit_bio() for the front piece of the current bio: __bio_split_to_limits()
// cuts at most max_sectors; the remainder re-enters later (current->bio_list), so every
// piece allocates its own tag and may sleep on its own.
//
// With an elevator, its bio_merge takes the elevator lock: that happens at the start of
// the next step, so the lock sees the arrival at the simulator's time.
void Submission::SubmitPiece(Task& task) {
  if (!task.elv_merge_pending) {
    q_.Charge(task, Stage::kSubmit, q_.profile.stage.submit);
    if (TryPlugMerge(task)) return;
    if (q_.sched->enabled() && task.bio_sectors_left <= q_.config.queue.max_sectors) {
      task.elv_merge_pending = true;
      return;
    }
  } else {
    task.elv_merge_pending = false;
    if (q_.sched->BioMerge(task)) return;
  }
  const bool others_queued = q_.hctxs[task.hctx].tags->has_waiters();
  int tag = AllocTag(task);
  if (tag >= 0) CountPreemption(task, others_queued);
  if (tag < 0) tag = SleepForTag(task, /*ws=*/-1, /*woken=*/false);
  if (tag >= 0) QueueRequest(task, tag);
}

// blk_attempt_plug_merge(): a back merge of the current piece into the request last
// added to the plug, if it is for the same queue, both are mergeable (neither is the
// REQ_NOMERGE front of a split), the piece starts where the request ends, the direction
// matches and the result stays within max_sectors (ll_back_merge_fn). The bio then ends
// with that request.
bool Submission::TryPlugMerge(Task& task) {
  Plug& plug = task.plug;
  if (!plug.active || plug.rqs.empty()) return false;
  const uint64_t max = q_.config.queue.max_sectors;
  if (task.bio_sectors_left > max) return false;              // a split front: REQ_NOMERGE
  if (q_.HctxOf(plug.rqs.back()) != task.hctx) return false;  // rq->q != q
  Request& rq = q_.requests[plug.rqs.back()];
  if (rq.nomerge || rq.write != task.bio_write || rq.sector + rq.sectors != task.bio_sector ||
      rq.sectors + task.bio_sectors_left > max) {
    return false;
  }
  const uint64_t bio = BlkMq::BioId(task.index, task.bio_io);
  q_.Bio(rq.last_io).next = bio;
  rq.last_io = bio;
  ++rq.nr_bios;
  rq.sectors += static_cast<uint32_t>(task.bio_sectors_left);
  task.bio_sector += task.bio_sectors_left;
  task.bio_sectors_left = 0;
  task.has_bio = false;
  plug.last_bytes = uint64_t{rq.sectors} * 512;
  ++q_.counters.plug_merges;
  return true;
}

// blk_mq_get_new_requests() -> __blk_mq_alloc_requests(): a cached request from the plug
// (blk_mq_peek_cached_request: its head, if that is for this queue), else a batch of
// plug->nr_ios driver tags (__blk_mq_alloc_requests_batch; the extras go to
// plug->cached_rqs), else one tag (blk_mq_get_tag's first __blk_mq_get_tag). -1 if no tag
// was free.
int Submission::AllocTag(Task& task) {
  Plug& plug = task.plug;
  if (!plug.cached_tags.empty() && plug.cached_tags.back().hctx == task.hctx) {
    const int tag = plug.cached_tags.back().tag;
    plug.cached_tags.pop_back();
    return tag;
  }
  SbitmapQueue& sbq = *q_.hctxs[task.hctx].tags;
  const StageCosts& cost = q_.profile.stage;
  const int nr_tags = plug.active ? plug.nr_ios : 1;
  // The elevator's limit_depth (mq-deadline: everything but sync reads) sets a shallow
  // depth, and blk_mq_get_tags() refuses batches then (CanBatchAllocate).
  const std::optional<uint32_t> shallow = q_.sched->ShallowDepth(task);
  if (NoPreempt(task)) return -1;
  if (nr_tags > 1 && q_.mechanisms.batch_alloc &&
      CanBatchAllocate(shallow.value_or(0), false, false)) {
    const BatchTags got = sbq.GetBatchTags(task.cpu, nr_tags);
    ++q_.counters.batch_allocs;
    q_.counters.batch_requested += static_cast<uint64_t>(nr_tags);
    q_.counters.batch_obtained += static_cast<uint64_t>(got.size);
    plug.nr_ios = PlugNrIosAfterAlloc(q_.mechanisms.batch_mode, nr_tags, got.size);
    q_.Charge(
        task, Stage::kTagAlloc,
        cost.tag_get_batch_base + cost.tag_get_batch_per_request * static_cast<SimTime>(got.size));
    if (got.size > 0) {
      q_.Charge(task, Stage::kRequestAlloc, cost.request_alloc * static_cast<SimTime>(got.size));
      // Cached in reverse so that pop_back() hands them out in ascending order.
      for (int i = got.size - 1; i >= 1; --i) plug.cached_tags.push_back({task.hctx, got.tags[i]});
      return got.tags[0];
    }
  } else if (plug.active) {
    plug.nr_ios = 1;  // data.nr_tags = plug->nr_ios; plug->nr_ios = 1
  }
  q_.Charge(task, Stage::kTagAlloc, cost.tag_get_single);
  const int tag = q_.sched->GetSchedTag(task, shallow);
  if (tag >= 0) {
    ++q_.counters.single_allocs;
    q_.Charge(task, Stage::kRequestAlloc, cost.request_alloc);
  }
  return tag;
}

// blk_mq_get_tag()'s slow path: prepare_to_wait on waitqueue `ws` (bt_wait_ptr's pick;
// -1: pick the next one now, as on entering the slow path), try once more (unless
// tag-no-preempt forbids it; a task `woken` in this allocation may always try), else
// io_schedule(), which flushes the plug with from_schedule = true. Returns the tag if the
// last try got one, else -1 (asleep).
int Submission::SleepForTag(Task& task, int ws, bool woken) {
  Hctx& hctx = q_.hctxs[task.hctx];
  SbitmapQueue& sbq = *hctx.tags;
  if (ws < 0) ws = SbitmapQueue::WaitPtr(hctx.wait_index);
  // split-whole-bio: the front piece's waiter records the tags its whole bio needs
  // (wait.nr_tags = 1 + bio->bi_nr_split); a later piece waits for 1. wake-by-tags
  // counts them when waking.
  const int need = q_.config.kernel.split_whole_bio && !IsContinuation(task) ? PiecesLeft(task) : 1;
  const bool others_queued = sbq.queued() > 0;
  (void)sbq.Wait(ws, task.index, need);
  task.waiting = true;
  int tag = -1;
  if (woken || !NoPreempt(task)) {
    q_.Charge(task, Stage::kTagAlloc, q_.profile.stage.tag_get_single);
    tag = q_.sched->GetSchedTag(task, q_.sched->ShallowDepth(task));
  }
  if (tag >= 0) {
    if (!woken) CountPreemption(task, others_queued);
    sbq.FinishWait(task.index);
    task.waiting = false;
    ++q_.counters.single_allocs;
    q_.Charge(task, Stage::kRequestAlloc, q_.profile.stage.request_alloc);
    return tag;
  }
  ++q_.counters.tag_waits;
  if (IsContinuation(task)) ++q_.counters.continuation_waits;
  FlushPlug(task, /*from_schedule=*/true);
  task.phase = TaskPhase::kTagSleep;
  return -1;
}

// tags.preempts: a bio's front piece got a tag without sleeping while others waited.
void Submission::CountPreemption(const Task& task, bool others_queued) {
  if (others_queued && !IsContinuation(task)) ++q_.counters.tag_preempts;
}

// A later piece of a split bio: its front has been queued already.
bool Submission::IsContinuation(const Task& task) const {
  return task.bio_sectors_left < task.ios[task.bio_io].bytes / 512;
}

// Split pieces of the current bio not yet submitted, this one included.
int Submission::PiecesLeft(const Task& task) const {
  const uint64_t max = q_.config.queue.max_sectors;
  return static_cast<int>(std::max<uint64_t>(1, (task.bio_sectors_left + max - 1) / max));
}

// tag-no-preempt (seed 001, Yu Kuai's RFC patches 5 and 6, Mar 2022): preempt_tag() is
// false, so a new bio's front piece does not try for a tag but sleeps, while more waiters
// are registered than there are waitqueues (ws_active > SBQ_WAIT_QUEUES: "heavy load"),
// unless the last wake-up found more than twice wake_batch tags free
// (force_tag_preemption). Later pieces of a split bio are REQ_PREEMPTIVE, and a task
// woken in this allocation (data->preemption) is checked by its caller.
bool Submission::NoPreempt(const Task& task) const {
  if (!q_.config.kernel.tag_no_preempt) return false;
  if (IsContinuation(task)) return false;
  const SbitmapQueue& sbq = *q_.hctxs[task.hctx].tags;
  return sbq.ws_active() > kSbqWaitQueues && !sbq.force_tag_preemption();
}

// After a wake-up: sbitmap_finish_wait, the waitqueue for the next sleep (bt_wait_ptr at
// the loop's end, so hctx->wait_index advances even when the retry then gets a tag), and
// the loop of blk_mq_get_tag again. Woken waiters race new I/O for the bits: no FIFO. -1
// if asleep.
int Submission::RetryTagAfterWake(Task& task) {
  Hctx& hctx = q_.hctxs[task.hctx];
  SbitmapQueue& sbq = *hctx.tags;
  if (task.waiting) {
    sbq.FinishWait(task.index);
    task.waiting = false;
  }
  const int ws = SbitmapQueue::WaitPtr(hctx.wait_index);
  q_.Charge(task, Stage::kTagAlloc, q_.profile.stage.tag_get_single);
  const int tag = q_.sched->GetSchedTag(task, q_.sched->ShallowDepth(task));
  if (tag >= 0) {
    ++q_.counters.single_allocs;
    q_.Charge(task, Stage::kRequestAlloc, q_.profile.stage.request_alloc);
    return tag;
  }
  return SleepForTag(task, ws, /*woken=*/true);
}

// blk_mq_bio_to_request() for the current piece, then blk_add_rq_to_plug() (flushing
// first at BLK_MAX_REQUEST_COUNT requests or after a request of BLK_PLUG_FLUSH_SIZE) or,
// unplugged, blk_mq_try_issue_directly().
void Submission::QueueRequest(Task& task, int tag) {
  const uint32_t index = task.hctx * q_.depth + static_cast<uint32_t>(tag);
  const uint64_t sectors = std::min<uint64_t>(task.bio_sectors_left, q_.config.queue.max_sectors);
  Request& rq = q_.requests[index];
  rq.task = task.index;
  rq.io = BlkMq::BioId(task.index, task.bio_io);
  rq.last_io = rq.io;
  rq.nr_bios = 1;
  rq.sector = task.bio_sector;
  rq.sectors = static_cast<uint32_t>(sectors);
  rq.write = task.bio_write;
  rq.nomerge = task.bio_sectors_left > sectors;  // the front of a split
  if (task.bio_split) ++q_.counters.split_pieces;
  task.bio_sector += sectors;
  task.bio_sectors_left -= sectors;
  if (task.bio_sectors_left == 0) task.has_bio = false;
  if (q_.sched->enabled()) q_.sched->PrepareRequest(task, index);

  Plug& plug = task.plug;
  if (!plug.active) {
    if (q_.sched->enabled()) {
      // blk_mq_insert_request() + blk_mq_run_hw_queue(hctx, async = true).
      task.insert.push_back(index);
      task.insert_run_sync = false;
    } else {
      task.dispatch.push_back(index);
    }
    return;
  }
  // blk_plug_max_rq_count(): twice BLK_MAX_REQUEST_COUNT once the plug holds requests
  // of several devices (plug->multiple_queues).
  const size_t max_rqs = static_cast<size_t>(kBlkMaxRequestCount) * (plug.multiple_queues ? 2 : 1);
  if (!plug.rqs.empty() && (plug.rqs.size() >= max_rqs || plug.last_bytes >= kBlkPlugFlushSize)) {
    FlushPlug(task, /*from_schedule=*/false);
  }
  if (!plug.rqs.empty() && q_.HctxOf(plug.rqs.back()) != task.hctx) plug.multiple_queues = true;
  plug.rqs.push_back(index);
  plug.last_bytes = sectors * 512;
}

// blk_mq_flush_plug_list(): without an elevator the list goes to queue_rqs (or direct
// issue), on this CPU. v0 also dispatches a from_schedule flush here rather than on
// kblockd.
//
// With an elevator (blk_mq_dispatch_list): insert_requests for the batch under one lock
// hold at the next step, then the hardware queue is run by this task — or by kblockd
// when the flush comes from schedule() (the task is going to sleep).
void Submission::FlushPlug(Task& task, bool from_schedule) {
  Plug& plug = task.plug;
  if (plug.rqs.empty()) return;
  ++q_.counters.plug_flushes;
  q_.Charge(task, Stage::kPlugFlush, q_.profile.stage.plug_flush);
  if (q_.sched->enabled()) {
    task.insert.insert(task.insert.end(), plug.rqs.begin(), plug.rqs.end());
    task.insert_run_sync = !from_schedule;
    plug.rqs.clear();
    plug.last_bytes = 0;
    plug.multiple_queues = false;
    return;
  }
  if (task.dispatch_pos == task.dispatch.size()) {
    task.dispatch.clear();
    task.dispatch_pos = 0;
  }
  task.dispatch.insert(task.dispatch.end(), plug.rqs.begin(), plug.rqs.end());
  plug.rqs.clear();
  plug.last_bytes = 0;
  plug.multiple_queues = false;
}

// blk_finish_plug(): flush, then blk_mq_free_plug_rqs() returns unused cached tags.
void Submission::FinishPlug(Task& task) {
  FlushPlug(task, /*from_schedule=*/false);
  Plug& plug = task.plug;
  for (const CachedTag& c : plug.cached_tags)
    q_.completion->FreeTag(c.hctx, c.tag, task.cpu, q_.cpus[task.cpu].busy_until());
  plug.cached_tags.clear();
  plug.active = false;
  plug.nr_ios = 1;
}

}  // namespace blkbench::engine
