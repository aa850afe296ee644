// Completion: issue from a task's list (queue_rq / queue_rqs), the device-completion
// event, blk_mq_end_request on the right CPU (rq_affinity, IPIs), tag frees with their
// wake-ups, and the CQE reaching the job.
#ifndef BLKBENCH_ENGINE_MODEL_COMPLETION_H_
#define BLKBENCH_ENGINE_MODEL_COMPLETION_H_

#include <vector>

#include "engine/model/blk_mq.h"

namespace blkbench::engine {

class Completion {
 public:
  explicit Completion(BlkMq& q) : q_(q) {}
  void Init() { completed_ids_.reserve(1024); }

  // The next request of the task's issue list through queue_rq (or back to hctx->dispatch).
  void IssueOne(Task& task);
  // Keeps one kDeviceCompletion event at the device's earliest completion; a completion
  // already due (null_blk irqmode 0) runs now.
  void ArmCompletion();
  // kDeviceCompletion.
  void OnDeviceCompletion();
  // The CPU a hardware queue's interrupt arrives on.
  int IrqCpu(uint32_t hctx) const;
  // blk_mq_put_tag(): frees the tag and wakes waiters at `at`.
  void FreeTag(uint32_t hctx, int tag, int cpu, SimTime at);
  // kCqe: the I/O's CQE reaches its job (its latency ends here).
  void PostCqe(uint32_t task_index, uint32_t io);

 private:
  void ProcessCompletions();
  void EndRequest(uint32_t rq_index);

  BlkMq& q_;
  std::vector<uint64_t> completed_ids_;
  EventId completion_event_;
  SimTime completion_at_ = kNever;
};

}  // namespace blkbench::engine

#endif  // BLKBENCH_ENGINE_MODEL_COMPLETION_H_
