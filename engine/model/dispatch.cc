// The dispatch side of blk-mq for SCSI-like devices: the per-LUN budget
// (scsi_mq_get_budget / scsi_mq_put_budget), hctx->dispatch, requeue when the budget is
// exhausted (blk_mq_dispatch_rq_list leaving requests on hctx->dispatch), SCHED_RESTART
// and the async re-run of the queue on completion (blk_mq_sched_restart -> kblockd).
// Also the driver issue common to every path.
#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"
#include "engine/model/completion.h"
#include "engine/model/hw_queues.h"
#include "engine/model/measurements.h"
#include "engine/model/sched_path.h"
#include "engine/model/submission.h"
#include "engine/model/tracer.h"

namespace blkbench::engine {
namespace {

constexpr int kFioPidBase = 1000;  // the jobs' pids in the trace

}  // namespace

// scsi_dev_queue_ready(): device_busy < queue_depth. Always true without a budget.
bool HwQueues::GetBudget() {
  if (!q_.has_budget) return true;
  if (budget_used_ >= budget_depth_) return false;
  ++budget_used_;
  return true;
}

void HwQueues::PutBudget() {
  if (q_.has_budget && budget_used_ > 0) --budget_used_;
}

// blk_mq_try_issue_directly() found no budget (or dispatch_busy): the request goes to
// the hardware queue's list under hctx->lock, SCHED_RESTART is marked so the next
// completion re-runs the queue, and dispatch_busy makes later submitters insert too.
// If nothing is in flight to restart it, the queue is run async right away.
void HwQueues::Requeue(Task& task, uint32_t rq_index) {
  const uint32_t h = rq_index / q_.depth;
  Hctx& hctx = q_.hctxs[h];
  q_.Charge(task, Stage::kInsert, q_.profile.coherence.lock_uncontended);
  hctx.dispatch.push_back(rq_index);
  ++q_.counters.requeues;
  hctx.dispatch_busy = true;
  hctx.restart = true;
  if (budget_used_ < budget_depth_) ScheduleRun(h, task.cpu, q_.cpus[task.cpu].busy_until());
}

// blk_mq_run_hw_queue(hctx, async = true): kblockd work on `cpu`.
void HwQueues::ScheduleRun(uint32_t h, int cpu, SimTime at) {
  Hctx& hctx = q_.hctxs[h];
  if (hctx.run_pending) return;
  hctx.run_pending = true;
  hctx.run_cpu = cpu;
  q_.sim.Schedule(std::max(at, q_.sim.now()), q_.handler, kRunQueue, h);
}

void HwQueues::OnRunQueue(uint32_t h) {
  Hctx& hctx = q_.hctxs[h];
  const SimTime busy = q_.cpus[hctx.run_cpu].busy_until();
  if (busy > q_.sim.now()) {  // kblockd waits for its CPU
    q_.sim.Schedule(busy, q_.handler, kRunQueue, h);
    return;
  }
  hctx.run_pending = false;
  RunHwQueue(h);
}

// blk_mq_sched_dispatch_requests() on kblockd: drain hctx->dispatch in order through
// blk_mq_dispatch_rq_list() while budgets last; what is left stays there with
// SCHED_RESTART set, and dispatch_busy clears once the list is empty.
void HwQueues::RunHwQueue(uint32_t h) {
  Hctx& hctx = q_.hctxs[h];
  if (q_.sched->enabled()) {
    // With an elevator the kblockd work runs the whole blk_mq_sched_dispatch_requests()
    // as a dispatcher on run_cpu.
    hctx.kblockd.cpu = hctx.run_cpu;
    q_.sched->StartDispatch(hctx.kblockd, h);
    if (hctx.kblockd.active() && !hctx.kblockd.step_pending) q_.sched->KblockdStep(h);
    return;
  }
  if (hctx.dispatch.empty()) {
    hctx.dispatch_busy = false;
    return;
  }
  VirtualCpu& cpu = q_.cpus[hctx.run_cpu];
  cpu.Run(q_.sim.now(), Stage::kDispatch, q_.profile.coherence.lock_uncontended);
  bool issued = false;
  while (!hctx.dispatch.empty() && GetBudget()) {
    const uint32_t index = hctx.dispatch.front();
    hctx.dispatch.pop_front();
    cpu.Run(q_.sim.now(), Stage::kDriver, q_.profile.stage.driver_queue_rq);
    IssueToDriver(index, hctx.run_cpu, /*kblockd=*/true);
    issued = true;
  }
  if (hctx.dispatch.empty()) {
    hctx.dispatch_busy = false;
  } else {
    hctx.restart = true;  // blk_mq_sched_mark_restart_hctx
  }
  if (issued) q_.completion->ArmCompletion();
}

// queue_rq for one request that has its budget: the dispatch statistics, the trace and
// the device. The caller charges the CPU and arms the completion.
void HwQueues::IssueToDriver(uint32_t index, int cpu, bool kblockd) {
  const Request& rq = q_.requests[index];
  ++q_.counters.dispatched;
  uint64_t& last_end = last_dispatch_end_[q_.HctxOf(index) / q_.hw_per_device];
  if (rq.sector == last_end) ++q_.counters.sequential_dispatches;
  last_end = rq.sector + rq.sectors;
  q_.sim.MixTrace(rq.sector * 2 + (rq.write ? 1 : 0));
  if (q_.tracer->enabled()) {
    q_.tracer->Event('D', index, cpu, kblockd ? -1 : kFioPidBase + static_cast<int>(rq.task));
  }
  DeviceRequest d;
  d.id = index;
  d.sector = rq.sector;
  d.sectors = rq.sectors;
  d.write = rq.write;
  d.hw_queue = (index / q_.depth) % q_.device->hw_queues();
  q_.device->Submit(d, q_.sim.now());
  q_.measurements->UpdateDeviceInflight(+1);
}

}  // namespace blkbench::engine
