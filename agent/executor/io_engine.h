// The executor's I/O engine contract, in the shape of fio's struct ioengine_ops
// (ioengine.h): init, queue → completed/queued/busy, commit, getevents + event, cleanup,
// and capability flags instead of more callbacks. One job loop (job_loop.cc) drives every
// engine; engines register in engine_registry.cc.
//
// Threading and memory: an engine object is made by its factory in the executor (parent)
// before the job starts and is then used by exactly one job, after fork() in process
// mode. Every method but the constructor and destructor runs in the job: no heap
// allocation, no locks, no exceptions (map memory with MapMemory, see job.h). The
// destructor runs in the parent and must not release OS resources: Cleanup() does that,
// and in process mode the parent's copy never ran Init().
#ifndef BLKBENCH_AGENT_EXECUTOR_IO_ENGINE_H_
#define BLKBENCH_AGENT_EXECUTOR_IO_ENGINE_H_

#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>

#include "agent/executor/job.h"
#include "agent/executor/job_plan.h"
#include "agent/executor/shared_state.h"
#include "common/resolved_job.h"

namespace blkbench {

// One I/O unit (fio's struct io_u, reduced): owned by the job loop, lent to the engine
// from queue() until the engine hands it back through event() (or queue() says done).
struct IoUnit {
  void* buf;          // bs bytes, page aligned; buffer `index` of the registered set
  uint64_t offset;    // bytes
  uint64_t start_ns;  // fio "lat" start: when the loop began preparing this I/O's batch
  int64_t result;     // set by the engine on completion: bytes transferred, or -errno
  uint32_t len;       // bytes (bs)
  uint32_t index;     // 0..iodepth-1, stable for the job: slot and fixed-buffer index
  uint8_t write;
  uint8_t measured;  // issued after ramp_time
};

// fio's FIO_Q_COMPLETED / FIO_Q_QUEUED / FIO_Q_BUSY.
enum class QueueResult {
  kCompleted,  // done before queue() returned (sync engines); io.result is set
  kQueued,     // accepted; it completes later through getevents/event
  kBusy,       // not accepted, nothing changed: commit and reap, then offer it again
};

// Kept by the job loop; an engine reports here every batch of queued I/Os it hands to the
// kernel, wherever that happens (commit, getevents, or queue() making room). Published as
// the executor.submit_calls / submitted / max_submit_batch / max_inflight internals.
struct SubmitLog {
  uint32_t uncommitted = 0;  // queued, not yet handed to the kernel
  uint32_t inflight = 0;     // handed to the kernel, not yet reaped
  uint64_t calls = 0, submitted = 0, max_batch = 0, max_inflight = 0;

  void Committed(uint32_t n) {
    if (n == 0) return;
    ++calls;
    submitted += n;
    if (n > max_batch) max_batch = n;
    uncommitted -= n;
    inflight += n;
    if (inflight > max_inflight) max_inflight = inflight;
  }
};

// What init() works with: the target is open, the units and their buffers exist.
struct EngineSetup {
  const JobPlan& plan;
  int fd;         // the target, opened by the loop (fio generic_open_file)
  IoUnit* units;  // plan.iodepth units, buffers laid out at `bufs + index * stride`
  char* bufs;
  size_t stride;  // bytes between buffers (bs rounded up to a page)
  SubmitLog& log;
  JobReporter& reporter;
};

class IoEngine {
 public:
  virtual ~IoEngine() = default;

  // fio ->setup + ->init: everything the engine needs before the start barrier (a ring or
  // aio context of plan.iodepth entries; registered files and buffers). On failure calls
  // setup.reporter.Fail() with a message naming the call and the option that needs it,
  // releases what it took, and returns false. REQUIRED.
  virtual bool Init(const EngineSetup& setup) = 0;

  // fio ->queue: starts `io` (or, for a sync engine, does it). The loop never has more
  // than iodepth units queued or in flight. A queued unit stays uncommitted until
  // Commit() or GetEvents() hands it to the kernel (an engine may do so at once: then it
  // reports to the SubmitLog here). Returns kCompleted with io.result set, kQueued, or
  // kBusy. Busy with nothing uncommitted or in flight is an error: the loop fails the job
  // naming failed_call(). REQUIRED.
  virtual QueueResult Queue(IoUnit& io) = 0;

  // fio ->commit: hands every uncommitted unit to the kernel (SubmitLog::Committed).
  // Returns 0 or -errno (EINTR is not an error: the loop retries). Async engines only.
  virtual int Commit() { return 0; }

  // fio ->getevents, with fio's td_io_getevents contract: first commits what is
  // uncommitted (an engine may do both in one system call), then waits until at least
  // `min` completions are available (min 0: does not wait) and takes at most `max`.
  // Returns how many it took (then Event(0..n-1) are valid until the next call), or
  // -errno. Async engines only.
  virtual int GetEvents(uint32_t min, uint32_t max) {
    (void)min;
    (void)max;
    return 0;
  }
  // fio ->event: the i-th unit the last GetEvents took, its result set.
  virtual IoUnit* Event(uint32_t i) {
    (void)i;
    return nullptr;
  }

  // fio's DDIR_SYNC unit (do_io_u_sync): flushes the target `fd` for fsync=N and
  // end_fsync, with nothing queued or in flight. Returns 0 or -errno. Default fsync(2).
  virtual int Sync(int fd) { return fsync(fd) == 0 ? 0 : -errno; }

  // fio ->cleanup: releases what Init took. Called once after a successful Init, when
  // nothing is queued or in flight (the loop drains first). REQUIRED.
  virtual void Cleanup() = 0;

  // Engine-specific internals (e.g. executor.ring_flags), written once at the end.
  virtual void PublishInternals(JobShared& out) { (void)out; }

  // After Queue/Commit/GetEvents failed: the system call, for the error message.
  const char* failed_call() const { return failed_call_ != nullptr ? failed_call_ : "I/O"; }

 protected:
  // Records which call failed and returns r (a negative errno), for `return Failed(...)`.
  int Failed(const char* call, int r) {
    failed_call_ = call;
    return r;
  }

 private:
  const char* failed_call_ = nullptr;
};

}  // namespace blkbench

#endif  // BLKBENCH_AGENT_EXECUTOR_IO_ENGINE_H_
