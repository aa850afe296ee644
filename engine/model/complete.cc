// Issue to the device (queue_rq / queue_rqs) and completion (blk_mq_end_request on the
// submitting CPU, tag free and wake-ups, then the CQE posted to the job).
#include <algorithm>

#include "engine/model/completion.h"
#include "engine/model/hw_queues.h"
#include "engine/model/measurements.h"
#include "engine/model/sched_path.h"
#include "engine/model/submission.h"
#include "engine/model/tracer.h"

namespace blkbench::engine {

// One request of the dispatch list through the driver's queue_rq (null_blk_queue_rq,
// nvme_queue_rq; queue_rqs costs the same per request in this model).
void Completion::IssueOne(Task& task) {
  const uint32_t index = task.dispatch[task.dispatch_pos++];
  if (task.dispatch_pos == task.dispatch.size()) {
    task.dispatch.clear();
    task.dispatch_pos = 0;
  }
  // blk_mq_get_budget_and_tag(): SCSI-like devices need a budget; while the hardware
  // queue is dispatch_busy, submitters insert and let the queue run instead.
  if (q_.has_budget && (q_.hctxs[index / q_.depth].dispatch_busy || !q_.hw->GetBudget())) {
    q_.hw->Requeue(task, index);
    return;
  }
  q_.Charge(task, Stage::kDriver, q_.profile.stage.driver_queue_rq);
  q_.hw->IssueToDriver(index, task.cpu, /*kblockd=*/false);
  ArmCompletion();
}

// Keeps one simulator event at the device's earliest completion. A completion already
// due (null_blk irqmode 0: blk_mq_end_request inline in queue_rq) runs right away.
void Completion::ArmCompletion() {
  const SimTime next = q_.device->NextCompletion();
  if (next != kNever && next <= q_.sim.now()) {
    ProcessCompletions();
    return;
  }
  if (next == completion_at_ && q_.sim.IsPending(completion_event_)) return;
  if (completion_event_.valid()) q_.sim.Cancel(completion_event_);
  completion_event_ = EventId{};
  completion_at_ = next;
  if (next != kNever) completion_event_ = q_.sim.Schedule(next, q_.handler, kDeviceCompletion, 0);
}

void Completion::OnDeviceCompletion() {
  completion_event_ = EventId{};
  completion_at_ = kNever;
  ProcessCompletions();
}

void Completion::ProcessCompletions() {
  completed_ids_.clear();
  q_.device->CollectCompleted(q_.sim.now(), &completed_ids_);
  // EndRequest never touches the device, so completed_ids_ stays intact.
  for (const uint64_t id : completed_ids_) {
    q_.measurements->UpdateDeviceInflight(-1);
    EndRequest(static_cast<uint32_t>(id));
  }
  ArmCompletion();
}

// The CPU a hardware queue's interrupt arrives on: the configured one, else the first
// CPU blk_mq_map_queues() maps to the hctx (contiguous groups of CPUs per hctx).
int Completion::IrqCpu(uint32_t hctx) const {
  if (q_.config.queue.irq_cpu >= 0) return q_.config.queue.irq_cpu;
  const uint64_t nr_hw = q_.hw_per_device;
  const uint64_t nr_cpus = static_cast<uint64_t>(q_.profile.cpus());
  return static_cast<int>(((hctx % nr_hw) * nr_cpus + nr_hw - 1) / nr_hw);
}

// blk_mq_complete_request() -> blk_mq_end_request() -> blk_mq_free_request(). null_blk
// (softirq or hrtimer raised by queue_rq) and NVMe/Optane (an interrupt vector per CPU)
// complete on the CPU that issued the request. A single-vector device (SCSI-like)
// interrupts IrqCpu(): blk_mq_complete_request_remote() then completes there when it
// shares the cache with the submitter (rq_affinity 1) or rq_affinity is 0, and otherwise
// queues the request on the submitter and sends it an IPI (one line transfer to send,
// one more to arrive: the profile has no IPI figure of its own).
void Completion::EndRequest(uint32_t index) {
  const Request& rq = q_.requests[index];
  Task& task = *q_.tasks[rq.task];
  int cpu = task.cpu;
  SimTime at = q_.sim.now();
  // null_blk irqmode 0 ends the request inside queue_rq, on the CPU that issued it
  // (with an elevator, any dispatcher).
  if (q_.inline_completion_cpu >= 0) {
    cpu = q_.inline_completion_cpu;
  } else if (q_.single_irq) {
    const int irq = IrqCpu(index / q_.depth);
    if (irq != task.cpu) {
      const int affinity = q_.config.queue.rq_affinity;
      const bool shared = q_.profile.CcxOf(irq) == q_.profile.CcxOf(task.cpu);
      if (affinity == 2 || (affinity == 1 && !shared)) {
        const SimTime line = q_.profile.LineTransferNs(irq, task.cpu);
        at = q_.cpus[irq].Run(at, Stage::kCompletion, line) + line;
        ++q_.counters.completion_ipis;
      } else {
        cpu = irq;
        ++q_.counters.remote_completions;
      }
    }
  }
  if (q_.tracer->enabled()) q_.tracer->Event('C', index, cpu, 0);
  const SimTime end = q_.cpus[cpu].Run(at, Stage::kCompletion, q_.profile.stage.completion);
  const uint32_t h = index / q_.depth;
  if (q_.sched->enabled()) q_.sched->Complete(index, cpu, end);
  if (q_.has_budget) q_.hw->PutBudget();  // scsi_end_request()
  // __blk_mq_free_request() -> blk_mq_sched_restart(): a queue marked SCHED_RESTART
  // (no budget or driver tag at dispatch) is re-run, async.
  Hctx& hctx = q_.hctxs[h];
  if (hctx.restart && (q_.has_budget || q_.sched->enabled())) {
    hctx.restart = false;
    ++q_.counters.restarts;
    q_.hw->ScheduleRun(h, cpu, end);
  }
  FreeTag(h, static_cast<int>(index % q_.depth), cpu, end);
  // Every bio merged into the request ends with it (possibly other tasks' bios).
  uint64_t bio = rq.io;
  const uint32_t nr_bios = rq.nr_bios;
  for (uint32_t b = 0; b < nr_bios; ++b) {
    IoSlot& io = q_.Bio(bio);
    const uint64_t this_bio = bio;
    bio = io.next;
    if (--io.pieces_left != 0) continue;
    if (end <= q_.sim.now()) {
      PostCqe(static_cast<uint32_t>(this_bio >> 32), static_cast<uint32_t>(this_bio));
    } else {
      q_.sim.Schedule(end, q_.handler, kCqe, this_bio);
    }
  }
}

// blk_mq_put_tag() -> sbitmap_queue_clear(): the freed bit, then wake-ups. Woken
// waiters run once the freeing CPU is done (try_to_wake_up at `at`) and the wake-up has
// reached them (the profile's wakeup_ns).
void Completion::FreeTag(uint32_t hctx, int tag, int cpu, SimTime at) {
  const WokenList woken = q_.hctxs[hctx].tags->Clear(static_cast<unsigned>(tag), cpu);
  for (const WaiterId id : woken) {
    ++q_.counters.wakeups;
    Task& waiter = *q_.tasks[id];
    waiter.woken = true;
    q_.Wake(waiter, at + q_.WakeupLatency());
  }
}

// io_uring's CQE reaches the job: the I/O's latency ends here (fio's completion time).
void Completion::PostCqe(uint32_t task_index, uint32_t io_index) {
  Task& task = *q_.tasks[task_index];
  const IoSlot& io = task.ios[io_index];
  const SimTime now = q_.sim.now();
  q_.measurements->UpdateInflight(-1);
  q_.measurements->RecordCqe(io, task.group, task.job_index);
  task.free_ios.push_back(io_index);
  ++task.cqes;
  if (q_.nr_devices > 1) task.cqe_devs.push_back(io.dev);
  if (task.phase == TaskPhase::kReap &&
      task.cqes >= std::min(static_cast<int>(task.job->complete_min), task.inflight)) {
    q_.Wake(task, now + q_.WakeupLatency());  // asleep in io_cqring_wait()
  }
}

}  // namespace blkbench::engine
