// Engine: the blk-mq model for one cell — fio-like jobs on virtual CPUs submitting
// through plugs and tags, an optional elevator, hardware queues and a DeviceModel
// (ENGINE.md §1, §2). A facade over the shared state (BlkMq) and its parts:
//   Submission    the fio loop, blk_mq_submit_bio, tags and the plug (job.cc, submit.cc)
//   SchedPath     the elevator, its locks and the dispatchers (sched.cc)
//   HwQueues      budgets, hctx->dispatch, queue runs, queue_rq (dispatch.cc)
//   Completion    issue from a task, device completions, tag frees, CQEs (complete.cc)
//   Measurements  latencies, in-flight averages, CPU per stage (measurements.cc)
//   Tracer        the blkparse-format D/C export (tracer.cc)
// Engine owns them, routes the simulator's events to them and answers the Runner.
#ifndef BLKBENCH_ENGINE_MODEL_ENGINE_H_
#define BLKBENCH_ENGINE_MODEL_ENGINE_H_

#include <cstdint>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/histogram.h"
#include "engine/model/blk_mq.h"
#include "engine/model/completion.h"
#include "engine/model/config.h"
#include "engine/model/elevator_registry.h"
#include "engine/model/hw_queues.h"
#include "engine/model/measurements.h"
#include "engine/model/sched_path.h"
#include "engine/model/submission.h"
#include "engine/model/tracer.h"
#include "engine/sched/elevator.h"
#include "engine/sim/spinlock.h"

namespace blkbench::engine {

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
  SimTime measure_start() const { return q_.config.job.ramp_ns; }
  SimTime time_limit() const;

  // Advances the simulation to `t`; at the ramp end it resets the measurements.
  void RunUntil(SimTime t);
  // True once every job has issued its bytes and reaped everything.
  bool all_done() const { return q_.finished_tasks == static_cast<int>(q_.tasks.size()); }
  SimTime last_cqe_time() const { return measurements_.last_cqe(); }
  // Nothing left to happen although jobs are not done: every job asleep with no event
  // pending to wake it (a lost wake-up in the model).
  bool stalled() const { return q_.sim.pending() == 0 && !all_done(); }
  SimTime now() const { return q_.sim.now(); }
  // A one-line summary of the queues and tasks, for stall reports.
  std::string DebugState() const;

  // Measurements since the ramp end.
  const EngineCounters& counters() const { return q_.counters; }
  const LatencyHistogram& lat() const { return measurements_.lat(); }
  const LatencyHistogram& read_lat() const { return measurements_.read_lat(); }
  const LatencyHistogram& write_lat() const { return measurements_.write_lat(); }
  // The histogram and counters of the I/Os completed since the previous call.
  void TakeInterval(LatencyHistogram* lat, EngineCounters* counters, std::vector<JobTotals>* jobs) {
    measurements_.TakeInterval(lat, counters, jobs);
  }
  // Time-average of I/Os between submission and CQE since the ramp end.
  double MeanInflight() const { return measurements_.MeanInflight(); }
  // I/Os completed since the ramp end per cgroup (index 0 = root, g = layout group g).
  const std::vector<uint64_t>& group_ios() const { return measurements_.group_ios(); }
  // Per job of EngineConfig::jobs, since the ramp end: its latencies and I/O counts.
  const std::vector<JobTotals>& job_totals() const { return measurements_.job_totals(); }
  const std::vector<JobOptions>& jobs() const { return q_.config.jobs; }
  // Time-average of requests at the device (issued by the driver, not completed): the
  // effective queue depth the device saw.
  double MeanDeviceInflight() const { return measurements_.MeanDeviceInflight(); }
  // CPU busy ns (all stages) and per stage, since the ramp end.
  SimTime CpuBusyNs() const { return measurements_.CpuBusyNs(); }
  SimTime CpuStageNs(Stage stage) const { return measurements_.CpuStageNs(stage); }
  uint64_t events() const { return q_.sim.events_executed(); }
  uint64_t trace_hash() const { return q_.sim.trace_hash(); }
  const DeviceModel& device() const { return *q_.device; }
  // SCSI-like devices (hdd*, ssd-sata) have a per-LUN dispatch budget of queue_depth.
  bool has_budget() const { return q_.has_budget; }
  // Driver tags per hardware queue (the tag set's depth, after nr_requests).
  unsigned driver_tags() const { return q_.driver_depth; }
  // Scheduler tags per hardware queue (nr_requests) with an elevator, else 0.
  unsigned sched_tags() const { return sched_.enabled() ? q_.depth : 0; }
  // The elevator (nullptr for "none") and its lock (nullptr when it has no global lock).
  const Elevator* elevator() const { return sched_.elevator(); }
  const Spinlock* elevator_lock() const { return sched_.lock(); }
  const Spinlock* insert_lock() const { return sched_.insert_lock(); }
  // A lock's statistics since the ramp end (lock: elevator_lock() or insert_lock()).
  LockStats LockStatsSinceRamp(const Spinlock& lock) const {
    return sched_.LockStatsSinceRamp(lock);
  }
  // One call site's share of a lock's takes since the ramp end (SchedPath::SiteStats).
  SchedPath::SiteStats LockSiteSinceRamp(const Spinlock& lock, Stage site) const {
    return sched_.SiteStatsSinceRamp(lock, site);
  }

  // blktrace: writes a blkparse-format line (BlktraceLine) for each of the first
  // `max_events` D (issue) and C (complete) events from now on; nullptr stops tracing.
  // The stream must outlive the engine or the next call. Tracing never changes the run.
  void set_trace_sink(std::ostream* out, uint64_t max_events = ~uint64_t{0}) {
    tracer_.set_sink(out, max_events);
  }
  uint64_t trace_events_written() const { return tracer_.written(); }

 private:
  Engine(const EngineConfig& config, MachineProfile profile, std::unique_ptr<DeviceModel> device);
  absl::Status Init(uint64_t target_size, const ElevatorRegistry& elevators);
  absl::Status AddTasks(uint32_t job, int first_thread, uint64_t capacity);
  void OnEvent(uint32_t kind, uint64_t arg) override;
  void ResetMeasurements();

  BlkMq q_;
  Submission submission_;
  SchedPath sched_;
  HwQueues hw_;
  Completion completion_;
  Measurements measurements_;
  Tracer tracer_;
};

}  // namespace blkbench::engine

#endif  // BLKBENCH_ENGINE_MODEL_ENGINE_H_
