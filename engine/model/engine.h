// Engine: the blk-mq model for one cell — fio-like jobs on virtual CPUs submitting
// through plugs and driver tags (scheduler "none") to a DeviceModel (ENGINE.md §1, §2).
#ifndef BLKBENCH_ENGINE_MODEL_ENGINE_H_
#define BLKBENCH_ENGINE_MODEL_ENGINE_H_

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/histogram.h"
#include "engine/blk/blk_mq_tag.h"
#include "engine/blk/sbitmap_queue.h"
#include "engine/device/device_model.h"
#include "engine/model/config.h"
#include "engine/sched/elevator.h"
#include "engine/sched/elevator_registry.h"
#include "engine/sim/cpu.h"
#include "engine/sim/machine_profile.h"
#include "engine/sim/rng.h"
#include "engine/sim/simulator.h"
#include "engine/sim/spinlock.h"

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
  uint64_t wakeups = 0;    // waiters woken by a tag free
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
  uint64_t driver_tag_fails = 0;      // blk_mq_get_driver_tag failures at dispatch
  uint64_t budget_fails = 0;          // no per-LUN budget at dispatch
  uint64_t elv_timer_fires = 0;       // the elevator's timer (bfq idle slice, kyber stats)
};

class Engine final : public EventHandler {
 public:
  // Loads the machine profile, builds the device and tags. InvalidArgument/NotFound for
  // a bad device, profile or CPU list. `target_size` (bytes, 0 = device default) bounds
  // the jobs' regions.
  // The scheduler comes from `elevators` (the built-in ones unless a test adds its own);
  // the registry must outlive the call only.
  static absl::StatusOr<std::unique_ptr<Engine>> Create(
      const EngineConfig& config, uint64_t target_size,
      const ElevatorRegistry& elevators = ElevatorRegistry::Builtin());
  ~Engine() override;

  // Simulated time at which measurement starts (the ramp end) and the time limit
  // (kNever when only bytes-limited).
  SimTime measure_start() const { return config_.job.ramp_ns; }
  SimTime time_limit() const;

  // Advances the simulation to `t`; at the ramp end it resets the measurements.
  void RunUntil(SimTime t);
  // True once every job has issued its bytes and reaped everything.
  bool all_done() const { return finished_tasks_ == static_cast<int>(tasks_.size()); }
  SimTime last_cqe_time() const { return last_cqe_; }
  // Nothing left to happen although jobs are not done: every job asleep with no event
  // pending to wake it (a lost wake-up in the model).
  bool stalled() const { return sim_.pending() == 0 && !all_done(); }
  SimTime now() const { return sim_.now(); }
  // A one-line summary of the queues and tasks, for stall reports.
  std::string DebugState() const;

  // Measurements since the ramp end.
  const EngineCounters& counters() const { return counters_; }
  const LatencyHistogram& lat() const { return lat_; }
  const LatencyHistogram& read_lat() const { return read_lat_; }
  const LatencyHistogram& write_lat() const { return write_lat_; }
  // The histogram and counters of the I/Os completed since the previous call.
  void TakeInterval(LatencyHistogram* lat, EngineCounters* counters);
  // Time-average of I/Os between submission and CQE since the ramp end.
  double MeanInflight() const;
  // I/Os completed since the ramp end per cgroup (index 0 = root, g = layout group g).
  const std::vector<uint64_t>& group_ios() const { return group_ios_; }
  // Time-average of requests at the device (issued by the driver, not completed): the
  // effective queue depth the device saw.
  double MeanDeviceInflight() const;
  // CPU busy ns (all stages) and per stage, since the ramp end.
  SimTime CpuBusyNs() const;
  SimTime CpuStageNs(Stage stage) const;
  uint64_t events() const { return sim_.events_executed(); }
  uint64_t trace_hash() const { return sim_.trace_hash(); }
  const DeviceModel& device() const { return *device_; }
  // SCSI-like devices (hdd*, ssd-sata) have a per-LUN dispatch budget of queue_depth.
  bool has_budget() const { return has_budget_; }
  // Driver tags per hardware queue (the tag set's depth, after nr_requests).
  unsigned driver_tags() const { return driver_depth_; }
  // Scheduler tags per hardware queue (nr_requests) with an elevator, else 0.
  unsigned sched_tags() const { return elv_ ? depth_ : 0; }
  // The elevator (nullptr for "none") and its lock (nullptr when it has no global lock).
  const Elevator* elevator() const { return elv_.get(); }
  const Spinlock* elevator_lock() const { return elv_lock_.get(); }
  const Spinlock* insert_lock() const { return insert_lock_.get(); }
  // A lock's statistics since the ramp end (lock: elevator_lock() or insert_lock()).
  LockStats LockStatsSinceRamp(const Spinlock& lock) const;

  // blktrace: writes a blkparse-format line (BlktraceLine) for each of the first
  // `max_events` D (issue) and C (complete) events from now on; nullptr stops tracing.
  // The stream must outlive the engine or the next call. Tracing never changes the run.
  void set_trace_sink(std::ostream* out, uint64_t max_events = ~uint64_t{0});
  uint64_t trace_events_written() const { return trace_written_; }

 private:
  enum EventKind : uint32_t {
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
  };
  static uint64_t BioId(uint32_t task, uint32_t slot) { return (uint64_t{task} << 32) | slot; }
  IoSlot& Bio(uint64_t id) {
    return tasks_[static_cast<size_t>(id >> 32)]->ios[static_cast<uint32_t>(id)];
  }
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
  // struct blk_plug: the request list and the cached (batch-allocated) tags.
  struct Plug {
    bool active = false;
    int nr_ios = 1;
    std::vector<int> cached_tags;
    std::vector<uint32_t> rqs;
    uint64_t last_bytes = 0;
  };
  enum class Phase : uint8_t { kSubmit, kTagSleep, kReap, kFinished };
  // One fio job (a task bound to one CPU) and its blk-mq per-task state.
  struct Task {
    explicit Task(uint64_t seed) : rng(seed) {}
    uint32_t index = 0;
    int cpu = 0;
    uint32_t hctx = 0;
    Rng rng;
    uint64_t region_start = 0;  // bytes
    uint64_t region_len = 0;    // bytes, a multiple of bs
    uint64_t seq_next = 0;      // next sequential offset within the region
    uint64_t bytes_issued = 0;
    bool done_issuing = false;
    Phase phase = Phase::kSubmit;
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
    int inflight = 0;      // I/Os submitted and not reaped
    int cqes = 0;          // completions posted and not reaped
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
    bool run_pending = false;  // an async run (kblockd) is scheduled
    int run_cpu = 0;           // the CPU that run executes on
  };

  Engine(const EngineConfig& config, MachineProfile profile, std::unique_ptr<DeviceModel> device);
  absl::Status Init(uint64_t target_size, const ElevatorRegistry& elevators);
  void OnEvent(uint32_t kind, uint64_t arg) override;

  // Task scheduling (engine.cc).
  void Wake(Task& task, SimTime at);
  void Charge(Task& task, Stage stage, SimTime ns);
  void ResetMeasurements();
  void UpdateInflight(int delta);

  // The fio io_uring/psync loop (job.cc).
  void Step(Task& task);
  void StartBatch(Task& task);
  void ReapStep(Task& task);
  void BeginBio(Task& task);

  // blk_mq_submit_bio and the plug (submit.cc).
  void SubmitPiece(Task& task);
  bool TryPlugMerge(Task& task);
  int AllocTag(Task& task);
  int SleepForTag(Task& task);
  int RetryTagAfterWake(Task& task);
  int PiecesLeft(const Task& task) const;
  bool NoPreempt(const Task& task) const;
  void QueueRequest(Task& task, int tag);
  void FlushPlug(Task& task, bool from_schedule);
  void FinishPlug(Task& task);

  // The elevator path (sched.cc): creation, bio_merge, insert, the dispatch loop,
  // driver tags, completion hooks and the elevator timer.
  absl::Status InitElevator(const ElevatorRegistry& elevators);
  std::optional<uint32_t> ShallowDepth(const Task& task) const;
  int GetSchedTag(Task& task, std::optional<uint32_t> shallow);
  bool ElvBioMerge(Task& task);
  void PrepareSchedRequest(Task& task, uint32_t index);
  void InsertStep(Task& task);
  void FreeMergedRequest(uint32_t index, int cpu, SimTime at);
  void AppendBios(uint32_t dst, uint32_t src, bool front);
  void StartDispatch(Dispatcher& d, uint32_t hctx);
  void DispatchStep(Dispatcher& d);
  void CollectStep(Dispatcher& d);
  void IssueStep(Dispatcher& d);
  void EndCollect(Dispatcher& d);
  void FinishDispatch(Dispatcher& d);
  void RequeueRest(Dispatcher& d);
  bool ElvHasWork(uint32_t hctx) const;
  bool ElvHasWorkLockless(uint32_t hctx);
  int ElvDispatch(Dispatcher& d, int want);
  bool GetDriverTag(uint32_t index, int cpu);
  void ElvComplete(uint32_t index, int cpu, SimTime at);
  void ElvAfterCall();
  void ElvTimerFired();
  void KblockdStep(uint32_t hctx);
  LockGrant TakeLock(Spinlock& lock, int cpu, SimTime cs_ns, Stage stage,
                     std::optional<double> missed_lines = std::nullopt, SimTime at = 0);
  SchedRequest& Srq(uint32_t index) { return sched_rqs_[index]; }
  uint32_t IndexOf(const SchedRequest& rq) const { return static_cast<uint32_t>(rq.id); }

  // Budget, hctx->dispatch, requeue and restart (dispatch.cc).
  bool GetBudget();
  void PutBudget();
  void Requeue(Task& task, uint32_t rq_index);
  void ScheduleRun(uint32_t hctx, int cpu, SimTime at);
  void RunHwQueue(uint32_t hctx);
  void IssueToDriver(uint32_t rq_index, int cpu, bool kblockd);
  void TraceEvent(char action, uint32_t rq_index, int cpu, int pid);

  // Issue and completion (complete.cc).
  void IssueOne(Task& task);
  void ArmCompletion();
  void ProcessCompletions();
  void EndRequest(uint32_t rq_index);
  int IrqCpu(uint32_t hctx) const;
  void FreeTag(uint32_t hctx, int tag, int cpu, SimTime at);
  void PostCqe(uint32_t task_index, uint32_t io);

  EngineConfig config_;
  MachineProfile profile_;
  SbqMechanisms mechanisms_;
  std::unique_ptr<DeviceModel> device_;
  Simulator sim_;
  CpuSet cpus_;
  std::vector<Hctx> hctxs_;
  unsigned depth_ = 0;         // tags per hctx in Hctx::tags (sched tags with an elevator)
  unsigned driver_depth_ = 0;  // driver tags per hctx
  std::unique_ptr<Elevator> elv_;
  std::unique_ptr<Spinlock> elv_lock_;     // dd->lock / bfqd->lock (kyber: none)
  std::unique_ptr<Spinlock> insert_lock_;  // dd-insert-lists: the insertion lists' lock
  std::vector<SchedRequest> sched_rqs_;    // parallel to requests_
  std::vector<SchedRequest*> elv_scratch_;
  std::vector<SchedRequest*> elv_freed_;
  SimTime lock_last_arrival_ = 0;
  // Lock grant times of requests taken out of the elevator by dispatchers still queued
  // for the lock: until then a lockless has_work still sees them (ascending; FIFO lock).
  std::deque<SimTime> dispatch_visible_until_;
  uint64_t next_dispatch_seq_ = 1;
  uint64_t last_issued_seq_ = 0;
  EventId elv_timer_event_;
  uint64_t elv_timer_at_ = kNoTimer;
  std::vector<uint32_t> run_requests_;
  SimTime elv_dispatch_cost_ = 0;
  bool elv_lock_on_completion_ = false;
  int batch_dispatch_ = 1;  // dispatch_request calls per lock hold (Elevator::DispatchBatch)
  int inline_completion_cpu_ = -1;  // >= 0 while completing inline in queue_rq
  std::vector<Request> requests_;
  std::vector<std::unique_ptr<Task>> tasks_;
  std::vector<uint64_t> completed_ids_;
  EventId completion_event_;
  SimTime completion_at_ = kNever;
  uint64_t last_dispatch_end_ = ~uint64_t{0};
  bool has_budget_ = false;
  uint32_t budget_depth_ = 0;  // sdev->queue_depth
  uint32_t budget_used_ = 0;   // sdev->device_busy
  std::ostream* trace_out_ = nullptr;
  uint64_t trace_left_ = 0;
  uint64_t trace_written_ = 0;
  std::vector<uint64_t> trace_seq_;  // blktrace sequence numbers are per CPU
  int trace_major_ = 0;
  bool single_irq_ = false;  // one interrupt vector per hctx (SCSI-like), not per CPU
  int finished_tasks_ = 0;
  SimTime last_cqe_ = 0;
  bool measuring_ = false;

  EngineCounters counters_;
  EngineCounters interval_counters_;
  LatencyHistogram lat_, read_lat_, write_lat_, interval_lat_;
  int inflight_ = 0;
  SimTime inflight_since_ = 0;
  double inflight_area_ = 0;
  std::vector<uint64_t> group_ios_;
  int dev_inflight_ = 0;
  SimTime dev_inflight_since_ = 0;
  double dev_inflight_area_ = 0;
  void UpdateDeviceInflight(int delta);
  SimTime measure_from_ = 0;
  std::vector<SimTime> cpu_stage_base_;
  LockStats elv_lock_base_, insert_lock_base_;
};

}  // namespace blkbench::engine

#endif  // BLKBENCH_ENGINE_MODEL_ENGINE_H_
