// Engine setup (machine profile, device, tags, elevator, jobs), the routing of the
// simulator's events to the parts, and the shared state's helpers (BlkMq).
#include "engine/model/engine.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "common/sim_vocabulary.h"
#include "engine/device/device_array.h"
#include "engine/sim/hash.h"

namespace blkbench::engine {

absl::StatusOr<std::unique_ptr<Engine>> Engine::Create(const EngineConfig& config,
                                                       uint64_t target_size,
                                                       const ElevatorRegistry& elevators) {
  absl::StatusOr<MachineProfile> profile =
      config.machine_profile.empty() ? LoadMachineProfile(config.machine)
                                     : ParseMachineProfile(config.machine_profile, config.machine);
  if (!profile.ok()) return profile.status();
  // engine.devices: identical devices, each with its own random stream (device 0 keeps
  // the one-device stream).
  std::vector<std::unique_ptr<DeviceModel>> devices;
  for (uint32_t d = 0; d < std::max(1u, config.queue.devices); ++d) {
    uint64_t seed = Mix64(config.job.randseed ^ 0xd1ce);
    if (d > 0) seed = Mix64(seed + d);
    absl::StatusOr<std::unique_ptr<DeviceModel>> device =
        MakeDeviceModel(config.device_kind, config.device_params, seed);
    if (!device.ok()) return device.status();
    devices.push_back(*std::move(device));
  }
  std::unique_ptr<DeviceModel> device = devices.size() == 1
                                            ? std::move(devices[0])
                                            : std::make_unique<DeviceArray>(std::move(devices));
  std::unique_ptr<Engine> engine(new Engine(config, *std::move(profile), std::move(device)));
  if (absl::Status s = engine->Init(target_size, elevators); !s.ok()) return s;
  return engine;
}

BlkMq::BlkMq(const EngineConfig& c, MachineProfile p, std::unique_ptr<DeviceModel> d)
    : config(c),
      profile(std::move(p)),
      mechanisms(MechanismsForKernel(c.kernel.major, c.kernel.minor)),
      device(std::move(d)),
      cpus(profile.cpus()) {}

void BlkMq::Wake(Task& task, SimTime at) {
  if (task.resume_pending) return;
  task.resume_pending = true;
  sim.Schedule(std::max(at, sim.now()), handler, kTaskResume, task.index);
}

// Lognormal: median * exp(sigma * z), sigma set by Init. Capped at 20 medians so one
// draw cannot stall a task for long.
SimTime BlkMq::WakeupLatency() {
  const SimTime median = profile.wakeup.median;
  if (median == 0) return 0;
  const double x = static_cast<double>(median) * std::exp(wakeup_sigma * wakeup_rng.Gaussian());
  return static_cast<SimTime>(std::llround(std::min(x, 20.0 * static_cast<double>(median))));
}

void BlkMq::Charge(Task& task, Stage stage, SimTime ns) {
  cpus[task.cpu].Run(sim.now(), stage, ns);
}

Engine::Engine(const EngineConfig& config, MachineProfile profile,
               std::unique_ptr<DeviceModel> device)
    : q_(config, std::move(profile), std::move(device)),
      submission_(q_),
      sched_(q_),
      hw_(q_),
      completion_(q_),
      measurements_(q_),
      tracer_(q_) {
  q_.handler = this;
  q_.submission = &submission_;
  q_.sched = &sched_;
  q_.hw = &hw_;
  q_.completion = &completion_;
  q_.measurements = &measurements_;
  q_.tracer = &tracer_;
}

Engine::~Engine() = default;

absl::Status Engine::Init(uint64_t target_size, const ElevatorRegistry& elevators) {
  if (q_.config.jobs.empty()) q_.config.jobs.push_back(q_.config.job);  // a config built by hand
  const JobOptions& job = q_.config.job;
  q_.wakeup_rng = Rng(Mix64(job.randseed ^ 0x3a4e));
  if (const WakeupLatency& w = q_.profile.wakeup; w.median != 0) {
    constexpr double kZ90 = 1.2815515655446004;  // the standard normal's 90th percentile
    q_.wakeup_sigma = std::log(static_cast<double>(w.p90) / static_cast<double>(w.median)) / kZ90;
  }
  const int nr_cpus = q_.profile.cpus();
  const uint32_t nr_hw = q_.device->hw_queues();
  q_.nr_devices = q_.device->sub_devices();
  q_.hw_per_device = q_.device->hw_queues_per_device();

  // Driver tags per hctx = queue_depth (blk_mq_alloc_tag_set); nr_requests may lower
  // it with "none" (blk_mq_update_nr_requests -> blk_mq_tag_update_depth).
  // SCSI (sd over AHCI or a SAS HBA): the tag set is the host's can_queue and each LUN
  // has a dispatch budget of its queue_depth (scsi_mq_get_budget). NVMe and null_blk
  // have no budget callback.
  const std::string& kind = q_.config.device_kind;
  q_.has_budget = q_.device->bus() == DeviceBus::kScsi;
  if (std::string why = SeveralDevicesProblem(kind, q_.config.queue.scheduler, q_.nr_devices);
      !why.empty()) {
    return absl::InvalidArgumentError(why);
  }
  hw_.Init();
  q_.driver_depth = q_.device->queue_depth();
  if (q_.has_budget && q_.config.queue.can_queue != 0) q_.driver_depth = q_.config.queue.can_queue;
  const bool elevator = q_.config.queue.scheduler != "none";
  if (elevator) {
    // blk_mq_init_sched(): nr_requests = 2 * min(queue depth, BLKDEV_DEFAULT_RQ) sched
    // tags per hctx, unless set; driver tags keep the tag set's depth.
    q_.depth = q_.config.queue.nr_requests != 0 ? q_.config.queue.nr_requests
                                                : 2 * std::min(q_.driver_depth, kBlkdevDefaultRq);
  } else {
    q_.depth = q_.driver_depth;
    if (q_.config.queue.nr_requests != 0)
      q_.depth = std::min(q_.depth, q_.config.queue.nr_requests);
    q_.driver_depth = q_.depth;
  }
  q_.single_irq = q_.has_budget;
  if (q_.config.queue.irq_cpu >= nr_cpus) {
    return absl::InvalidArgumentError(absl::StrCat("engine.irq_cpu ", q_.config.queue.irq_cpu,
                                                   " >= the machine's ", nr_cpus, " CPUs"));
  }
  tracer_.Init(TraceMajor(q_.device->bus()), nr_cpus);
  if (q_.config.kernel.plug_batch_retry) q_.mechanisms.batch_mode = BatchMode::kMultiPass;
  for (uint32_t h = 0; h < nr_hw; ++h) {
    SbitmapQueueOptions o =
        SbqOptionsForKernel(q_.config.kernel.major, q_.config.kernel.minor, nr_cpus,
                            Mix64(job.randseed + 0x7a95 + h), q_.config.kernel.wake_by_tags);
    o.batch_mode = q_.mechanisms.batch_mode;
    absl::StatusOr<SbitmapQueue> sbq = SbitmapQueue::Create(q_.depth, o);
    if (!sbq.ok()) return sbq.status();
    Hctx hctx;
    hctx.tags = std::make_unique<SbitmapQueue>(*std::move(sbq));
    if (elevator) {
      o.sbitmap.seed = Mix64(job.randseed + 0xd71e + h);
      absl::StatusOr<SbitmapQueue> driver = SbitmapQueue::Create(q_.driver_depth, o);
      if (!driver.ok()) return driver.status();
      hctx.driver_tags = std::make_unique<SbitmapQueue>(*std::move(driver));
    }
    q_.hctxs.push_back(std::move(hctx));
  }
  q_.requests.resize(static_cast<size_t>(nr_hw) * q_.depth);
  if (elevator) {
    if (absl::Status s = sched_.Init(elevators); !s.ok()) return s;
  }

  uint64_t capacity = target_size;
  if (capacity == 0) capacity = q_.device->capacity_bytes();
  if (capacity == 0) capacity = kDefaultCapacity;
  // Threads in the cell's order (common/cell_jobs.h): jobs[0]'s numjobs, then jobs[1]'s, ...
  int i = 0;
  for (uint32_t j = 0; j < q_.config.jobs.size(); ++j) {
    if (absl::Status s = AddTasks(j, i, capacity); !s.ok()) return s;
    i += static_cast<int>(q_.config.jobs[j].numjobs);
  }
  completion_.Init();
  size_t slots = 16;
  for (const auto& t : q_.tasks) slots += t->ios.size() + 2;
  q_.sim.Reserve(slots);
  q_.measuring = job.ramp_ns == 0;
  ResetMeasurements();
  for (auto& t : q_.tasks) {
    t->not_before = t->job->startdelay_ns;
    q_.Wake(*t, t->not_before);
  }
  return absl::OkStatus();
}

// The numjobs tasks of job `j`, the first being thread `first` of the cell.
absl::Status Engine::AddTasks(uint32_t j, int first, uint64_t capacity) {
  const JobOptions& job = q_.config.jobs[j];
  const int nr_cpus = q_.profile.cpus();
  const uint32_t nr_hw = q_.hw_per_device;
  std::vector<int> allowed;
  if (!job.cpus_allowed.empty()) {
    absl::StatusOr<std::vector<int>> parsed = ParseCpuList(job.cpus_allowed, nr_cpus);
    if (!parsed.ok()) return parsed.status();
    allowed = *std::move(parsed);
  } else {
    for (int c = 0; c < nr_cpus; ++c) allowed.push_back(c);
  }
  const Rng root(q_.config.job.randseed);
  const std::string who = job.name.empty() ? "job " : absl::StrCat("job '", job.name, "' ");
  for (int k = 0; k < static_cast<int>(job.numjobs); ++k) {
    const int i = first + k;  // the thread's index in the cell
    auto task = std::make_unique<Task>(root.Fork(static_cast<uint64_t>(i)).seed());
    task->index = static_cast<uint32_t>(i);
    task->job = &job;
    task->job_index = j;
    task->cpu = allowed[static_cast<size_t>(i) % allowed.size()];
    // blk_mq_map_queues: contiguous groups of CPUs per hardware queue.
    task->hctx_base = static_cast<uint32_t>(static_cast<uint64_t>(task->cpu) * nr_hw /
                                            static_cast<uint64_t>(nr_cpus));
    // Its files: every device (fio opens each file of filename= in every job), or with
    // t/io_uring the devices dealt to it (device f to thread f % numjobs).
    if (job.file_service == FileService::kUring && job.numjobs > 1) {
      for (uint32_t f = static_cast<uint32_t>(k) % q_.nr_devices; f < q_.nr_devices;
           f += job.numjobs) {
        task->files.push_back(f);
      }
    } else {
      for (uint32_t f = 0; f < q_.nr_devices; ++f) task->files.push_back(f);
    }
    task->dev = task->files[0];
    task->hctx = task->dev * q_.hw_per_device + task->hctx_base;
    task->file_left = job.file_service_nr;
    task->dev_seq_next.assign(q_.nr_devices, 0);
    task->dev_pending.assign(q_.nr_devices, 0);
    task->region_start = job.offset + static_cast<uint64_t>(k) * job.offset_increment;
    if (task->region_start >= capacity) {
      return absl::InvalidArgumentError(absl::StrCat(
          who, k, ": offset ", task->region_start, " is beyond the device's ", capacity, " bytes"));
    }
    // fio divides size among the job's files (here: devices).
    uint64_t len = job.size ? job.size / q_.nr_devices : capacity - task->region_start;
    len = std::min(len, capacity - task->region_start);
    task->region_len = len / job.bs * job.bs;
    if (task->region_len == 0 || task->region_len < job.bs_max) {
      return absl::InvalidArgumentError(absl::StrCat(who, k, ": region smaller than bs"));
    }
    task->ios.resize(static_cast<size_t>(job.iodepth));
    for (int s = static_cast<int>(job.iodepth) - 1; s >= 0; --s)
      task->free_ios.push_back(static_cast<uint32_t>(s));
    task->group = q_.config.cgroups.GroupOf(i);
    // Every job has its own io context, thread or process: fio's threads are pthreads,
    // created without CLONE_IO, so each gets its own on its first I/O (copy_io() shares
    // the parent's only with CLONE_IO), and bfq gives each its own queue.
    task->ioc = static_cast<uint32_t>(i);
    task->disp.cpu = task->cpu;
    task->disp.pid = 1000 + i;  // as dispatch.cc's fio pids
    task->disp.list.reserve(2 * kBlkMaxRequestCount);
    task->insert.reserve(2 * kBlkMaxRequestCount);
    task->dispatch.reserve(2 * kBlkMaxRequestCount);
    task->plug.rqs.reserve(2 * kBlkMaxRequestCount);
    task->plug.cached_tags.reserve(64);
    q_.tasks.push_back(std::move(task));
  }
  return absl::OkStatus();
}

std::string Engine::DebugState() const {
  std::string out = absl::StrCat("device in flight ", q_.device->in_flight());
  if (const Elevator* elv = sched_.elevator()) {
    absl::StrAppend(&out, "; elevator has_work ", elv->HasWorkFor(0), ", staged inserts ",
                    elv->staged());
  }
  for (size_t h = 0; h < q_.hctxs.size() && h < 4; ++h) {
    const Hctx& x = q_.hctxs[h];
    absl::StrAppend(&out, "; hctx", h, " dispatch ", x.dispatch.size(), " restart ", x.restart,
                    " run_pending ", x.run_pending, " kblockd ", x.kblockd.active());
  }
  int phases[4] = {0, 0, 0, 0};
  int inflight = 0;
  for (const auto& t : q_.tasks) {
    ++phases[static_cast<int>(t->phase)];
    inflight += t->inflight;
  }
  absl::StrAppend(&out, "; tasks submit/tagsleep/reap/done ", phases[0], "/", phases[1], "/",
                  phases[2], "/", phases[3], ", I/Os in flight ", inflight);
  return out;
}

SimTime Engine::time_limit() const {
  return q_.config.job.runtime_ns ? q_.config.job.ramp_ns + q_.config.job.runtime_ns : kNever;
}

void Engine::RunUntil(SimTime t) {
  if (!q_.measuring) {
    const SimTime ramp_end = q_.config.job.ramp_ns;
    q_.sim.RunUntil(std::min(t, ramp_end));
    if (t < ramp_end) return;
    q_.measuring = true;
    ResetMeasurements();
  }
  q_.sim.RunUntil(t);
}

void Engine::OnEvent(uint32_t kind, uint64_t arg) {
  switch (kind) {
    case kTaskResume: {
      Task& task = *q_.tasks[arg];
      task.resume_pending = false;
      // A CPU runs one thing at a time: interrupts (completions) that ran while the
      // task was scheduled push it back.
      const SimTime busy = q_.cpus[task.cpu].busy_until();
      if (busy > q_.sim.now()) {
        q_.Wake(task, busy);
        return;
      }
      submission_.Step(task);
      return;
    }
    case kDeviceCompletion:
      completion_.OnDeviceCompletion();
      return;
    case kCqe:
      completion_.PostCqe(static_cast<uint32_t>(arg >> 32), static_cast<uint32_t>(arg));
      return;
    case kKblockdStep:
      sched_.KblockdStep(static_cast<uint32_t>(arg));
      return;
    case kElvTimer:
      sched_.TimerFired();
      return;
    case kRunQueue:
      hw_.OnRunQueue(static_cast<uint32_t>(arg));
      return;
    default:
      return;
  }
}

void Engine::ResetMeasurements() {
  measurements_.Reset();
  sched_.ResetLockBases();
}

}  // namespace blkbench::engine
