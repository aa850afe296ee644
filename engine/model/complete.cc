// Issue to the device (queue_rq / queue_rqs) and completion (blk_mq_end_request on the
// submitting CPU, tag free and wake-ups, then the CQE posted to the job).
#include "engine/model/engine.h"

namespace blkbench::engine {

// One request of the dispatch list through the driver's queue_rq (null_blk_queue_rq,
// nvme_queue_rq; queue_rqs costs the same per request in this model).
void Engine::IssueOne(Task& task) {
  const uint32_t index = task.dispatch[task.dispatch_pos++];
  if (task.dispatch_pos == task.dispatch.size()) {
    task.dispatch.clear();
    task.dispatch_pos = 0;
  }
  Charge(task, Stage::kDriver, profile_.stage.driver_queue_rq);
  const Request& rq = requests_[index];
  ++counters_.dispatched;
  if (rq.sector == last_dispatch_end_) ++counters_.sequential_dispatches;
  last_dispatch_end_ = rq.sector + rq.sectors;
  sim_.MixTrace(rq.sector * 2 + (rq.write ? 1 : 0));
  const uint32_t hctx = index / depth_;
  DeviceRequest d;
  d.id = index;
  d.sector = rq.sector;
  d.sectors = rq.sectors;
  d.write = rq.write;
  d.hw_queue = hctx % device_->hw_queues();
  device_->Submit(d, sim_.now());
  ArmCompletion();
}

// Keeps one simulator event at the device's earliest completion. A completion already
// due (null_blk irqmode 0: blk_mq_end_request inline in queue_rq) runs right away.
void Engine::ArmCompletion() {
  const SimTime next = device_->NextCompletion();
  if (next != kNever && next <= sim_.now()) {
    ProcessCompletions();
    return;
  }
  if (next == completion_at_ && sim_.IsPending(completion_event_)) return;
  if (completion_event_.valid()) sim_.Cancel(completion_event_);
  completion_event_ = EventId{};
  completion_at_ = next;
  if (next != kNever) completion_event_ = sim_.Schedule(next, this, kDeviceCompletion, 0);
}

void Engine::ProcessCompletions() {
  completed_ids_.clear();
  device_->CollectCompleted(sim_.now(), &completed_ids_);
  // EndRequest never touches the device, so completed_ids_ stays intact.
  for (const uint64_t id : completed_ids_) EndRequest(static_cast<uint32_t>(id));
  ArmCompletion();
}

// blk_mq_end_request() -> blk_mq_free_request() on the submitting CPU (completion
// steered there; same-CPU IRQ/softirq, or inline for null_blk irqmode 0).
void Engine::EndRequest(uint32_t index) {
  const Request& rq = requests_[index];
  Task& task = *tasks_[rq.task];
  const SimTime end =
      cpus_[task.cpu].Run(sim_.now(), Stage::kCompletion, profile_.stage.completion);
  FreeTag(index / depth_, static_cast<int>(index % depth_), task.cpu, end);
  IoSlot& io = task.ios[rq.io];
  if (--io.pieces_left != 0) return;
  const uint64_t arg = (uint64_t{rq.task} << 32) | rq.io;
  if (end <= sim_.now()) {
    PostCqe(rq.task, rq.io);
  } else {
    sim_.Schedule(end, this, kCqe, arg);
  }
}

// blk_mq_put_tag() -> sbitmap_queue_clear(): the freed bit, then wake-ups. Woken
// waiters run once the freeing CPU is done (try_to_wake_up at `at`).
void Engine::FreeTag(uint32_t hctx, int tag, int cpu, SimTime at) {
  const WokenList woken = hctxs_[hctx].tags->Clear(static_cast<unsigned>(tag), cpu);
  for (const WaiterId id : woken) {
    ++counters_.wakeups;
    Task& waiter = *tasks_[id];
    waiter.woken = true;
    Wake(waiter, at);
  }
}

// io_uring's CQE reaches the job: the I/O's latency ends here (fio's completion time).
void Engine::PostCqe(uint32_t task_index, uint32_t io_index) {
  Task& task = *tasks_[task_index];
  const IoSlot& io = task.ios[io_index];
  const SimTime now = sim_.now();
  const uint64_t lat = now - io.start;
  UpdateInflight(-1);
  if (measuring_) {
    lat_.Add(lat);
    interval_lat_.Add(lat);
    (io.write ? write_lat_ : read_lat_).Add(lat);
    for (EngineCounters* c : {&counters_, &interval_counters_}) {
      if (io.write) {
        ++c->write_ios;
        c->write_bytes += io.bytes;
      } else {
        ++c->read_ios;
        c->read_bytes += io.bytes;
      }
    }
    last_cqe_ = now;
  }
  task.free_ios.push_back(io_index);
  ++task.cqes;
  if (task.phase == Phase::kReap &&
      task.cqes >= std::min(config_.job.batch_complete_min, task.inflight)) {
    Wake(task, now);
  }
}

}  // namespace blkbench::engine
