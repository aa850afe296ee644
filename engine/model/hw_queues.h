// HwQueues: the hardware-queue side of blk-mq — the per-LUN budget of SCSI-like devices
// (scsi_mq_get_budget / put_budget), hctx->dispatch with requeue and SCHED_RESTART, the
// async queue run (blk_mq_run_hw_queue on kblockd) and queue_rq to the device.
#ifndef BLKBENCH_ENGINE_MODEL_HW_QUEUES_H_
#define BLKBENCH_ENGINE_MODEL_HW_QUEUES_H_

#include "engine/model/blk_mq.h"

namespace blkbench::engine {

class HwQueues {
 public:
  explicit HwQueues(BlkMq& q) : q_(q) {}
  void Init() {
    budget_depth_ = q_.device->queue_depth();
    last_dispatch_end_.assign(q_.nr_devices, ~uint64_t{0});
  }

  // scsi_dev_queue_ready(): takes a budget; always true without a budget.
  bool GetBudget();
  void PutBudget();
  // blk_mq_try_issue_directly() found no budget: `rq_index` waits on hctx->dispatch
  // with SCHED_RESTART and dispatch_busy set.
  void Requeue(Task& task, uint32_t rq_index);
  // blk_mq_run_hw_queue(hctx, async = true): a kRunQueue event on `cpu` at `at` (once).
  void ScheduleRun(uint32_t hctx, int cpu, SimTime at);
  // kRunQueue: waits for the run CPU, then runs the queue (RunHwQueue).
  void OnRunQueue(uint32_t hctx);
  // queue_rq for a request that holds its budget: statistics, the D trace event and the
  // device. The caller charges the CPU and arms the completion.
  void IssueToDriver(uint32_t rq_index, int cpu, bool kblockd);

 private:
  void RunHwQueue(uint32_t hctx);

  BlkMq& q_;
  uint32_t budget_depth_ = 0;                // sdev->queue_depth
  uint32_t budget_used_ = 0;                 // sdev->device_busy
  std::vector<uint64_t> last_dispatch_end_;  // per device: where its last dispatch ended
};

}  // namespace blkbench::engine

#endif  // BLKBENCH_ENGINE_MODEL_HW_QUEUES_H_
