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
  // blk_mq_get_budget_and_tag(): SCSI-like devices need a budget; while the hardware
  // queue is dispatch_busy, submitters insert and let the queue run instead.
  if (has_budget_ && (hctxs_[index / depth_].dispatch_busy || !GetBudget())) {
    Requeue(task, index);
    return;
  }
  Charge(task, Stage::kDriver, profile_.stage.driver_queue_rq);
  IssueToDriver(index, task.cpu, /*kblockd=*/false);
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
  for (const uint64_t id : completed_ids_) {
    UpdateDeviceInflight(-1);
    EndRequest(static_cast<uint32_t>(id));
  }
  ArmCompletion();
}

// The CPU a hardware queue's interrupt arrives on: the configured one, else the first
// CPU blk_mq_map_queues() maps to the hctx (contiguous groups of CPUs per hctx).
int Engine::IrqCpu(uint32_t hctx) const {
  if (config_.queue.irq_cpu >= 0) return config_.queue.irq_cpu;
  const uint64_t nr_hw = hctxs_.size();
  const uint64_t nr_cpus = static_cast<uint64_t>(profile_.cpus());
  return static_cast<int>((hctx * nr_cpus + nr_hw - 1) / nr_hw);
}

// blk_mq_complete_request() -> blk_mq_end_request() -> blk_mq_free_request(). null_blk
// (softirq or hrtimer raised by queue_rq) and NVMe/Optane (an interrupt vector per CPU)
// complete on the CPU that issued the request. A single-vector device (SCSI-like)
// interrupts IrqCpu(): blk_mq_complete_request_remote() then completes there when it
// shares the cache with the submitter (rq_affinity 1) or rq_affinity is 0, and otherwise
// queues the request on the submitter and sends it an IPI (one line transfer to send,
// one more to arrive: the profile has no IPI figure of its own).
void Engine::EndRequest(uint32_t index) {
  const Request& rq = requests_[index];
  Task& task = *tasks_[rq.task];
  int cpu = task.cpu;
  SimTime at = sim_.now();
  // null_blk irqmode 0 ends the request inside queue_rq, on the CPU that issued it
  // (with an elevator, any dispatcher).
  if (inline_completion_cpu_ >= 0) {
    cpu = inline_completion_cpu_;
  } else if (single_irq_) {
    const int irq = IrqCpu(index / depth_);
    if (irq != task.cpu) {
      const int affinity = config_.queue.rq_affinity;
      const bool shared = profile_.CcxOf(irq) == profile_.CcxOf(task.cpu);
      if (affinity == 2 || (affinity == 1 && !shared)) {
        const SimTime line = profile_.LineTransferNs(irq, task.cpu);
        at = cpus_[irq].Run(at, Stage::kCompletion, line) + line;
        ++counters_.completion_ipis;
      } else {
        cpu = irq;
        ++counters_.remote_completions;
      }
    }
  }
  if (trace_out_ != nullptr) TraceEvent('C', index, cpu, 0);
  const SimTime end = cpus_[cpu].Run(at, Stage::kCompletion, profile_.stage.completion);
  const uint32_t h = index / depth_;
  if (elv_) ElvComplete(index, cpu, end);
  if (has_budget_) PutBudget();  // scsi_end_request()
  // __blk_mq_free_request() -> blk_mq_sched_restart(): a queue marked SCHED_RESTART
  // (no budget or driver tag at dispatch) is re-run, async.
  Hctx& hctx = hctxs_[h];
  if (hctx.restart && (has_budget_ || elv_)) {
    hctx.restart = false;
    ++counters_.restarts;
    ScheduleRun(h, cpu, end);
  }
  FreeTag(h, static_cast<int>(index % depth_), cpu, end);
  // Every bio merged into the request ends with it (possibly other tasks' bios).
  uint64_t bio = rq.io;
  const uint32_t nr_bios = rq.nr_bios;
  for (uint32_t b = 0; b < nr_bios; ++b) {
    IoSlot& io = Bio(bio);
    const uint64_t this_bio = bio;
    bio = io.next;
    if (--io.pieces_left != 0) continue;
    if (end <= sim_.now()) {
      PostCqe(static_cast<uint32_t>(this_bio >> 32), static_cast<uint32_t>(this_bio));
    } else {
      sim_.Schedule(end, this, kCqe, this_bio);
    }
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
    ++group_ios_[task.group];
  }
  task.free_ios.push_back(io_index);
  ++task.cqes;
  if (task.phase == Phase::kReap &&
      task.cqes >= std::min(config_.job.batch_complete_min, task.inflight)) {
    Wake(task, now);
  }
}

}  // namespace blkbench::engine
