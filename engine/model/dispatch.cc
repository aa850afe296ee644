// The dispatch side of blk-mq for SCSI-like devices: the per-LUN budget
// (scsi_mq_get_budget / scsi_mq_put_budget), hctx->dispatch, requeue when the budget is
// exhausted (blk_mq_dispatch_rq_list leaving requests on hctx->dispatch), SCHED_RESTART
// and the async re-run of the queue on completion (blk_mq_sched_restart -> kblockd).
// Also the driver issue common to every path and the blktrace D/C export.
#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"
#include "engine/model/blktrace.h"
#include "engine/model/engine.h"

namespace blkbench::engine {
namespace {

constexpr int kFioPidBase = 1000;    // the jobs' pids in the trace
constexpr int kKworkerPidBase = 90;  // kblockd workers' pids in the trace

}  // namespace

// scsi_dev_queue_ready(): device_busy < queue_depth. Always true without a budget.
bool Engine::GetBudget() {
  if (!has_budget_) return true;
  if (budget_used_ >= budget_depth_) return false;
  ++budget_used_;
  return true;
}

void Engine::PutBudget() {
  if (has_budget_ && budget_used_ > 0) --budget_used_;
}

// blk_mq_try_issue_directly() found no budget (or dispatch_busy): the request goes to
// the hardware queue's list under hctx->lock, SCHED_RESTART is marked so the next
// completion re-runs the queue, and dispatch_busy makes later submitters insert too.
// If nothing is in flight to restart it, the queue is run async right away.
void Engine::Requeue(Task& task, uint32_t rq_index) {
  const uint32_t h = rq_index / depth_;
  Hctx& hctx = hctxs_[h];
  Charge(task, Stage::kInsert, profile_.coherence.lock_uncontended);
  hctx.dispatch.push_back(rq_index);
  ++counters_.requeues;
  hctx.dispatch_busy = true;
  hctx.restart = true;
  if (budget_used_ < budget_depth_) ScheduleRun(h, task.cpu, cpus_[task.cpu].busy_until());
}

// blk_mq_run_hw_queue(hctx, async = true): kblockd work on `cpu`.
void Engine::ScheduleRun(uint32_t h, int cpu, SimTime at) {
  Hctx& hctx = hctxs_[h];
  if (hctx.run_pending) return;
  hctx.run_pending = true;
  hctx.run_cpu = cpu;
  sim_.Schedule(std::max(at, sim_.now()), this, kRunQueue, h);
}

// blk_mq_sched_dispatch_requests() on kblockd: drain hctx->dispatch in order through
// blk_mq_dispatch_rq_list() while budgets last; what is left stays there with
// SCHED_RESTART set, and dispatch_busy clears once the list is empty.
void Engine::RunHwQueue(uint32_t h) {
  Hctx& hctx = hctxs_[h];
  if (elv_) {
    // With an elevator the kblockd work runs the whole blk_mq_sched_dispatch_requests()
    // as a dispatcher on run_cpu.
    hctx.kblockd.cpu = hctx.run_cpu;
    StartDispatch(hctx.kblockd, h);
    if (hctx.kblockd.active() && !hctx.kblockd.step_pending) KblockdStep(h);
    return;
  }
  if (hctx.dispatch.empty()) {
    hctx.dispatch_busy = false;
    return;
  }
  VirtualCpu& cpu = cpus_[hctx.run_cpu];
  cpu.Run(sim_.now(), Stage::kDispatch, profile_.coherence.lock_uncontended);
  bool issued = false;
  while (!hctx.dispatch.empty() && GetBudget()) {
    const uint32_t index = hctx.dispatch.front();
    hctx.dispatch.pop_front();
    cpu.Run(sim_.now(), Stage::kDriver, profile_.stage.driver_queue_rq);
    IssueToDriver(index, hctx.run_cpu, /*kblockd=*/true);
    issued = true;
  }
  if (hctx.dispatch.empty()) {
    hctx.dispatch_busy = false;
  } else {
    hctx.restart = true;  // blk_mq_sched_mark_restart_hctx
  }
  if (issued) ArmCompletion();
}

// queue_rq for one request that has its budget: the dispatch statistics, the trace and
// the device. The caller charges the CPU and arms the completion.
void Engine::IssueToDriver(uint32_t index, int cpu, bool kblockd) {
  const Request& rq = requests_[index];
  ++counters_.dispatched;
  if (rq.sector == last_dispatch_end_) ++counters_.sequential_dispatches;
  last_dispatch_end_ = rq.sector + rq.sectors;
  sim_.MixTrace(rq.sector * 2 + (rq.write ? 1 : 0));
  if (trace_out_ != nullptr) {
    TraceEvent('D', index, cpu, kblockd ? -1 : kFioPidBase + static_cast<int>(rq.task));
  }
  DeviceRequest d;
  d.id = index;
  d.sector = rq.sector;
  d.sectors = rq.sectors;
  d.write = rq.write;
  d.hw_queue = (index / depth_) % device_->hw_queues();
  device_->Submit(d, sim_.now());
  UpdateDeviceInflight(+1);
}

void Engine::set_trace_sink(std::ostream* out, uint64_t max_events) {
  trace_out_ = out;
  trace_left_ = out != nullptr ? max_events : 0;
}

// One blkparse line. pid -1 = a kblockd worker on `cpu`; C events carry the error (0).
void Engine::TraceEvent(char action, uint32_t index, int cpu, int pid) {
  if (trace_left_ == 0) return;
  --trace_left_;
  ++trace_written_;
  const Request& rq = requests_[index];
  std::string comm = action == 'C' ? "0" : "fio";  // C events show the error
  if (pid < 0) {
    pid = kKworkerPidBase + cpu;
    if (action != 'C') comm = absl::StrCat("kworker/", cpu, ":1H");
  }
  BlktraceEvent e;
  e.major = trace_major_;
  e.cpu = cpu;
  e.seq = ++trace_seq_[static_cast<size_t>(cpu)];
  e.time_ns = sim_.now();
  e.pid = action == 'C' ? 0 : pid;
  e.action = action;
  e.rwbs = rq.write ? "WS" : "R";
  e.sector = rq.sector;
  e.sectors = rq.sectors;
  e.tail = comm;
  *trace_out_ << BlktraceLine(e) << '\n';
}

}  // namespace blkbench::engine
