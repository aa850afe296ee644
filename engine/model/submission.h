// Submission: the fio job loop (do_io with io_uring/psync) and blk_mq_submit_bio — split
// pieces, plug merges, request/tag allocation (batch, single, sleeping on the tag
// waitqueues) and the plug (blk_add_rq_to_plug, blk_mq_flush_plug_list, blk_finish_plug).
#ifndef BLKBENCH_ENGINE_MODEL_SUBMISSION_H_
#define BLKBENCH_ENGINE_MODEL_SUBMISSION_H_

#include "engine/model/blk_mq.h"

namespace blkbench::engine {

class Submission {
 public:
  explicit Submission(BlkMq& q) : q_(q) {}

  // One unit of the task's work at now (kTaskResume): a pending elevator insertion, its
  // dispatcher, the issue list, then the fio loop. Charges CPU time and re-arms the
  // task's resume unless it goes to sleep (tag wait, waiting for completions, done).
  void Step(Task& task);

 private:
  // The fio io_uring/psync loop (job.cc).
  void StartBatch(Task& task);
  void ReapStep(Task& task);
  void BeginBio(Task& task);
  void NextFile(Task& task);
  void Pace(Task& task, bool write, uint64_t len);

  // blk_mq_submit_bio and the plug (submit.cc).
  void SubmitPiece(Task& task);
  bool TryPlugMerge(Task& task);
  int AllocTag(Task& task);
  int SleepForTag(Task& task, int ws, bool woken);
  bool IsContinuation(const Task& task) const;
  void CountPreemption(const Task& task, bool others_queued);
  int RetryTagAfterWake(Task& task);
  int PiecesLeft(const Task& task) const;
  bool NoPreempt(const Task& task) const;
  void QueueRequest(Task& task, int tag);
  void FlushPlug(Task& task, bool from_schedule);
  void FinishPlug(Task& task);

  BlkMq& q_;
};

}  // namespace blkbench::engine

#endif  // BLKBENCH_ENGINE_MODEL_SUBMISSION_H_
