// BlkMq: the state of the blk-mq model that its parts share — the cell's configuration,
// the device, the simulator and CPUs, hardware queues with their tags, the request pool,
// the jobs (tasks), the counters — and the types of those objects. Engine owns it; the
// parts (Submission, SchedPath, HwQueues, Completion, Measurements, Tracer) each keep
// their own state and reach the others through the part pointers here.
#ifndef BLKBENCH_ENGINE_MODEL_BLK_MQ_H_
#define BLKBENCH_ENGINE_MODEL_BLK_MQ_H_

#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include "engine/blk/blk_mq_tag.h"
#include "engine/blk/sbitmap_queue.h"
#include "engine/device/device_model.h"
#include "engine/model/config.h"
#include "engine/sim/cpu.h"
#include "engine/sim/machine_profile.h"
#include "engine/sim/rng.h"
#include "engine/sim/simulator.h"

namespace blkbench::engine {

inline constexpr int kBlkMaxRequestCount = 32;                     // BLK_MAX_REQUEST_COUNT
inline constexpr uint64_t kBlkPlugFlushSize = 128 * 1024;          // BLK_PLUG_FLUSH_SIZE
inline constexpr int kIoPlugThreshold = 2;                         // io_uring IO_PLUG_THRESHOLD
inline constexpr uint64_t kDefaultCapacity = uint64_t{256} << 30;  // non-HDD devices
inline constexpr uint32_t kBlkdevDefaultRq = 128;                  // BLKDEV_DEFAULT_RQ

// Counters behind RunResult.internals. Reset at the end of the ramp.
struct EngineCounters {
  uint64_t single_allocs = 0;  // blk_mq_get_tag successes
  uint64_t batch_allocs = 0;   // __blk_mq_alloc_requests_batch calls
  uint64_t batch_requested = 0;
  uint64_t batch_obtained = 0;
  uint64_t tag_waits = 0;  // sbitmap_prepare_to_wait + sleep
  // Seed 001's evidence: a bio's first piece that got a tag while others waited (it
  // preempted them), and sleeps of a bio's later pieces (others' pieces come between).
  uint64_t tag_preempts = 0;
  uint64_t continuation_waits = 0;
  uint64_t wakeups = 0;  // waiters woken by a tag free
  uint64_t plug_flushes = 0;
  uint64_t split_pieces = 0;  // pieces of bios that were split
  uint64_t dispatched = 0;
  uint64_t sequential_dispatches = 0;  // start sector == previous dispatch's end
  uint64_t requeues = 0;            // requests put on hctx->dispatch (no budget / BLK_STS_RESOURCE)
  uint64_t restarts = 0;            // blk_mq_sched_restart re-runs of a hardware queue
  uint64_t plug_merges = 0;         // bios back-merged into the plug's last request
  uint64_t completion_ipis = 0;     // completions sent to the submitting CPU by IPI
  uint64_t remote_completions = 0;  // completed on the interrupted CPU, not the submitter
  uint64_t read_ios = 0, write_ios = 0, read_bytes = 0, write_bytes = 0;
  // Elevator path.
  uint64_t elv_bio_merges = 0;        // bios merged by the elevator's bio_merge
  uint64_t elv_insert_merges = 0;     // requests merged away at insertion
  uint64_t elv_dispatch_calls = 0;    // dispatch_request calls (under the lock)
  uint64_t elv_dispatch_null = 0;     // ... that returned nothing: a wasted lock take
  uint64_t elv_dispatch_skipped = 0;  // dd-serialize-dispatch: found dispatch in progress
  uint64_t dispatch_inversions = 0;   // issued right after a request handed out later
  uint64_t dispatch_in_order = 0;     // issued right after its elevator predecessor
  uint64_t dispatch_hctx_in_order =
      0;  // issued right after its hctx's previous one in elevator order
  uint64_t dispatch_inverted_pairs = 0;  // pairs issued in the opposite order (IssueOrder)
  uint64_t driver_tag_fails = 0;         // blk_mq_get_driver_tag failures at dispatch
  uint64_t budget_fails = 0;             // no per-LUN budget at dispatch
  uint64_t elv_timer_fires = 0;          // the elevator's timer (bfq idle slice, kyber stats)
};

// The simulator events of the model (the values are hashed into the trace: never renumber).
enum EngineEvent : uint32_t {
  kTaskResume = 1,
  kDeviceCompletion = 2,
  kCqe = 3,
  kRunQueue = 4,
  kKblockdStep = 5,  // a kblockd dispatcher's next step (arg = hctx)
  kElvTimer = 6,     // the elevator's timer (bfq_idle_slice_timer, kyber_timer_fn)
};

// One in-flight fio I/O (a bio before splitting). Bios are named engine-wide by
// BioId(task, slot): the elevator may merge another task's bio into a request.
struct IoSlot {
  SimTime start = 0;
  uint32_t pieces_left = 0;
  uint32_t bytes = 0;
  uint64_t next = 0;  // the next bio merged into the same request (Request::nr_bios)
  bool write = false;
  uint32_t dev = 0;  // its device (engine.devices)
};
// One request: index = hctx * depth + tag.
struct Request {
  uint32_t task = 0;
  uint64_t io = 0;       // first bio (BioId); the others follow IoSlot::next
  uint64_t last_io = 0;  // last merged bio
  uint32_t nr_bios = 1;
  uint64_t sector = 0;
  uint32_t sectors = 0;
  bool write = false;
  bool nomerge = false;  // REQ_NOMERGE: the front piece of a split bio
  // Elevator path: the driver tag (-1 = none yet), whether it holds a dispatch budget,
  // the order the elevator handed it out, and the CPU that issued it.
  int driver_tag = -1;
  bool budget = false;
  uint64_t dispatch_seq = 0;
  int issue_cpu = 0;
};
// A context running blk_mq_sched_dispatch_requests(): a submitter running its hardware
// queue after a plug flush, or the hctx's kblockd work. One elevator call per step, so
// every lock is taken at the simulator's `now` and contexts interleave as on a machine.
struct Dispatcher {
  enum class Phase : uint8_t { kIdle, kDrain, kCollect, kIssue };
  Phase phase = Phase::kIdle;
  int cpu = 0;
  int pid = -1;  // blktrace pid; -1 = a kblockd worker
  uint32_t hctx = 0;
  int max_dispatch = 0;  // left in this __blk_mq_do_dispatch_sched pass
  bool stop = false;     // the pass ends after this list
  bool from_drain = false;
  std::vector<uint32_t> list;  // blk_mq_dispatch_rq_list's list
  size_t pos = 0;
  bool step_pending = false;  // kblockd: a kKblockdStep event is scheduled
  bool rerun = false;         // run again when done (the work was queued while running)
  bool active() const { return phase != Phase::kIdle; }
};
// A batch-allocated tag of plug->cached_rqs and the hardware queue it belongs to.
struct CachedTag {
  uint32_t hctx = 0;
  int tag = 0;
};
// struct blk_plug: the request list and the cached (batch-allocated) tags, the head of
// the cache at the back.
struct Plug {
  bool active = false;
  int nr_ios = 1;
  bool multiple_queues = false;  // requests of several devices (engine.devices)
  std::vector<CachedTag> cached_tags;
  std::vector<uint32_t> rqs;
  uint64_t last_bytes = 0;
};
enum class TaskPhase : uint8_t { kSubmit, kTagSleep, kReap, kFinished };
// One fio job (a task bound to one CPU) and its blk-mq per-task state.
struct Task {
  explicit Task(uint64_t seed) : rng(seed) {}
  uint32_t index = 0;
  const JobOptions* job = nullptr;  // its job's options (EngineConfig::jobs); never null
  uint32_t job_index = 0;           // index into EngineConfig::jobs
  int cpu = 0;
  uint32_t hctx = 0;       // the hardware queue of its current bio (dev * per + hctx_base)
  uint32_t hctx_base = 0;  // its CPU's hardware queue within a device (blk_mq_map_queues)
  // engine.devices: the devices it drives (its files), the position of the current bio's
  // in them and that device, I/Os left before fio switches file (file_service_type), each
  // device's sequential offset while on another, its I/Os not yet reaped (t/io_uring's
  // pending_ios), and the devices of the posted CQEs in ring order.
  std::vector<uint32_t> files;
  uint32_t file_pos = 0;
  uint32_t dev = 0;
  uint32_t file_left = 0;
  std::vector<uint64_t> dev_seq_next;
  std::vector<uint32_t> dev_pending;
  std::deque<uint32_t> cqe_devs;
  Rng rng;
  uint64_t region_start = 0;  // bytes
  uint64_t region_len = 0;    // bytes, a multiple of bs
  uint64_t seq_next = 0;      // next sequential offset within the region
  uint64_t bytes_issued = 0;
  bool done_issuing = false;
  TaskPhase phase = TaskPhase::kSubmit;
  int batch_left = 0;  // bios left in this io_uring_enter
  // The bio being submitted (split pieces go through one at a time).
  bool has_bio = false;
  uint32_t bio_io = 0;
  uint64_t bio_sector = 0;
  uint64_t bio_sectors_left = 0;
  bool bio_write = false;
  bool bio_split = false;
  Plug plug;
  std::vector<uint32_t> dispatch;  // requests being issued (queue_rqs / direct issue)
  size_t dispatch_pos = 0;
  // Elevator path: requests to insert at the next step (a plug flush or an unplugged
  // request), whether the queue is then run by this task (else kblockd), the running
  // dispatcher, and whether the current piece still has to try the elevator's bio_merge.
  std::vector<uint32_t> insert;
  bool insert_run_sync = false;
  Dispatcher disp;
  bool elv_merge_pending = false;
  uint32_t group = 0;  // cgroup (0 = root)
  uint32_t ioc = 0;    // io context: the process
  bool resume_pending = false;
  bool woken = false;    // woken from a tag waitqueue, not yet run
  bool waiting = false;  // registered on a waitqueue (prepare_to_wait .. finish_wait)
  // fio pacing (job.cc): no new I/O before not_before (startdelay, the rate's schedule,
  // the end of a think); thinktime after think_completed reaches thinktime_blocks, at most
  // thinktime_blocks issued between thinks.
  uint64_t not_before = 0;
  uint32_t think_completed = 0, think_issued = 0;
  bool think_pending = false;
  int inflight = 0;  // I/Os submitted and not reaped
  int cqes = 0;      // completions posted and not reaped
  std::vector<IoSlot> ios;
  std::vector<uint32_t> free_ios;
};
struct Hctx {
  std::unique_ptr<SbitmapQueue> tags;
  WaitIndex wait_index;
  std::deque<uint32_t> dispatch;  // hctx->dispatch (and the ctx lists), FIFO
  bool restart = false;           // BLK_MQ_S_SCHED_RESTART
  bool dispatch_busy = false;
  std::unique_ptr<SbitmapQueue> driver_tags;  // with an elevator (tags = sched_tags)
  Dispatcher kblockd;
  bool run_pending = false;      // an async run (kblockd) is scheduled
  int run_cpu = 0;               // the CPU that run executes on
  uint64_t last_issued_seq = 0;  // elevator hand-out number of its last issued request
};

class Submission;
class SchedPath;
class HwQueues;
class Completion;
class Measurements;
class Tracer;

// Not thread-safe: one simulation runs on one thread.
struct BlkMq {
  BlkMq(const EngineConfig& c, MachineProfile p, std::unique_ptr<DeviceModel> d);

  static uint64_t BioId(uint32_t task, uint32_t slot) { return (uint64_t{task} << 32) | slot; }
  IoSlot& Bio(uint64_t id) {
    return tasks[static_cast<size_t>(id >> 32)]->ios[static_cast<uint32_t>(id)];
  }
  // The hardware queue and tag of request `index` (index = hctx * depth + tag).
  uint32_t HctxOf(uint32_t index) const { return index / depth; }
  // Resumes `task` at `at` (or now) unless a resume is already pending.
  void Wake(Task& task, SimTime at);
  // The task's CPU runs `ns` of `stage` from now.
  void Charge(Task& task, Stage stage, SimTime ns);
  // One draw of the profile's wake-up latency (0 when it has none): a task woken from a
  // sleep (a tag wait, a wait for completions) runs this long after try_to_wake_up().
  SimTime WakeupLatency();

  EngineConfig config;
  MachineProfile profile;
  SbqMechanisms mechanisms;
  std::unique_ptr<DeviceModel> device;
  Simulator sim;
  CpuSet cpus;
  EventHandler* handler = nullptr;  // receives every event (the Engine)
  std::vector<Hctx> hctxs;          // devices * hw_per_device, device d's from d * hw_per_device
  uint32_t hw_per_device = 1;
  uint32_t nr_devices = 1;
  unsigned depth = 0;         // tags per hctx in Hctx::tags (sched tags with an elevator)
  unsigned driver_depth = 0;  // driver tags per hctx
  std::vector<Request> requests;
  std::vector<std::unique_ptr<Task>> tasks;
  bool has_budget = false;         // SCSI-like: a per-LUN dispatch budget
  bool single_irq = false;         // one interrupt vector per hctx (SCSI-like), not per CPU
  int inline_completion_cpu = -1;  // >= 0 while completing inline in queue_rq
  int finished_tasks = 0;
  bool measuring = false;  // past the ramp
  EngineCounters counters;
  EngineCounters interval_counters;
  Rng wakeup_rng{0};        // the wake-up latency draws, seeded from the job's randseed by Init
  double wakeup_sigma = 0;  // their log-spread: p90 / median = exp(1.2816 * sigma)

  // The parts, set by Engine before the first event.
  Submission* submission = nullptr;
  SchedPath* sched = nullptr;
  HwQueues* hw = nullptr;
  Completion* completion = nullptr;
  Measurements* measurements = nullptr;
  Tracer* tracer = nullptr;
};

}  // namespace blkbench::engine

#endif  // BLKBENCH_ENGINE_MODEL_BLK_MQ_H_
