// Engine setup, the event loop glue (task resumes, device completions, CQEs) and the
// measurements. The submission path is in submit.cc, the fio loop in job.cc, issue and
// completion in complete.cc.
#include "engine/model/engine.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "engine/device/hdd.h"
#include "engine/sim/hash.h"

namespace blkbench::engine {

absl::StatusOr<std::unique_ptr<Engine>> Engine::Create(const EngineConfig& config,
                                                       uint64_t target_size,
                                                       const ElevatorRegistry& elevators) {
  absl::StatusOr<MachineProfile> profile = LoadMachineProfile(config.machine);
  if (!profile.ok()) return profile.status();
  absl::StatusOr<std::unique_ptr<DeviceModel>> device = MakeDeviceModel(
      config.device_kind, config.device_params, Mix64(config.job.randseed ^ 0xd1ce));
  if (!device.ok()) return device.status();
  std::unique_ptr<Engine> engine(new Engine(config, *std::move(profile), *std::move(device)));
  if (absl::Status s = engine->Init(target_size, elevators); !s.ok()) return s;
  return engine;
}

Engine::Engine(const EngineConfig& config, MachineProfile profile,
               std::unique_ptr<DeviceModel> device)
    : config_(config),
      profile_(std::move(profile)),
      mechanisms_(MechanismsForKernel(config.kernel.major, config.kernel.minor)),
      device_(std::move(device)),
      cpus_(profile_.cpus()) {}

Engine::~Engine() = default;

absl::Status Engine::Init(uint64_t target_size, const ElevatorRegistry& elevators) {
  const JobOptions& job = config_.job;
  const int nr_cpus = profile_.cpus();
  std::vector<int> allowed;
  if (!job.cpus_allowed.empty()) {
    absl::StatusOr<std::vector<int>> parsed = ParseCpuList(job.cpus_allowed, nr_cpus);
    if (!parsed.ok()) return parsed.status();
    allowed = *std::move(parsed);
  } else {
    for (int c = 0; c < nr_cpus; ++c) allowed.push_back(c);
  }

  // Driver tags per hctx = queue_depth (blk_mq_alloc_tag_set); nr_requests may lower
  // it with "none" (blk_mq_update_nr_requests -> blk_mq_tag_update_depth).
  // SCSI (sd over AHCI or a SAS HBA): the tag set is the host's can_queue and each LUN
  // has a dispatch budget of its queue_depth (scsi_mq_get_budget). NVMe and null_blk
  // have no budget callback.
  const std::string& kind = config_.device_kind;
  has_budget_ = kind.rfind("hdd", 0) == 0 || kind == "ssd-sata";
  budget_depth_ = device_->queue_depth();
  driver_depth_ = device_->queue_depth();
  if (has_budget_ && config_.queue.can_queue != 0) driver_depth_ = config_.queue.can_queue;
  const bool elevator = config_.queue.scheduler != "none";
  if (elevator) {
    // blk_mq_init_sched(): nr_requests = 2 * min(queue depth, BLKDEV_DEFAULT_RQ) sched
    // tags per hctx, unless set; driver tags keep the tag set's depth.
    depth_ = config_.queue.nr_requests != 0 ? config_.queue.nr_requests
                                            : 2 * std::min(driver_depth_, kBlkdevDefaultRq);
  } else {
    depth_ = driver_depth_;
    if (config_.queue.nr_requests != 0) depth_ = std::min(depth_, config_.queue.nr_requests);
    driver_depth_ = depth_;
  }
  single_irq_ = has_budget_;
  if (config_.queue.irq_cpu >= nr_cpus) {
    return absl::InvalidArgumentError(absl::StrCat("engine.irq_cpu ", config_.queue.irq_cpu,
                                                   " >= the machine's ", nr_cpus, " CPUs"));
  }
  trace_major_ = has_budget_ ? 8 : kind.rfind("null_blk", 0) == 0 ? 252 : 259;
  trace_seq_.assign(static_cast<size_t>(nr_cpus), 0);
  if (config_.kernel.plug_batch_retry) mechanisms_.batch_mode = BatchMode::kMultiPass;
  const uint32_t nr_hw = device_->hw_queues();
  for (uint32_t h = 0; h < nr_hw; ++h) {
    SbitmapQueueOptions o =
        SbqOptionsForKernel(config_.kernel.major, config_.kernel.minor, nr_cpus,
                            Mix64(job.randseed + 0x7a95 + h), config_.kernel.wake_by_tags);
    o.batch_mode = mechanisms_.batch_mode;
    absl::StatusOr<SbitmapQueue> sbq = SbitmapQueue::Create(depth_, o);
    if (!sbq.ok()) return sbq.status();
    Hctx hctx;
    hctx.tags = std::make_unique<SbitmapQueue>(*std::move(sbq));
    if (elevator) {
      o.sbitmap.seed = Mix64(job.randseed + 0xd71e + h);
      absl::StatusOr<SbitmapQueue> driver = SbitmapQueue::Create(driver_depth_, o);
      if (!driver.ok()) return driver.status();
      hctx.driver_tags = std::make_unique<SbitmapQueue>(*std::move(driver));
    }
    hctxs_.push_back(std::move(hctx));
  }
  requests_.resize(static_cast<size_t>(nr_hw) * depth_);
  if (elevator) {
    if (absl::Status s = InitElevator(elevators); !s.ok()) return s;
  }

  uint64_t capacity = target_size;
  if (capacity == 0) {
    const auto* hdd = dynamic_cast<const HddModel*>(device_.get());
    capacity = hdd != nullptr ? hdd->geometry().capacity_sectors() * 512 : kDefaultCapacity;
  }
  const Rng root(job.randseed);
  for (int i = 0; i < job.numjobs; ++i) {
    auto task = std::make_unique<Task>(root.Fork(static_cast<uint64_t>(i)).seed());
    task->index = static_cast<uint32_t>(i);
    task->cpu = allowed[static_cast<size_t>(i) % allowed.size()];
    // blk_mq_map_queues: contiguous groups of CPUs per hardware queue.
    task->hctx = static_cast<uint32_t>(static_cast<uint64_t>(task->cpu) * nr_hw /
                                       static_cast<uint64_t>(nr_cpus));
    task->region_start = job.offset + static_cast<uint64_t>(i) * job.offset_increment;
    if (task->region_start >= capacity) {
      return absl::InvalidArgumentError(absl::StrCat("job ", i, ": offset ", task->region_start,
                                                     " is beyond the device's ", capacity,
                                                     " bytes"));
    }
    uint64_t len = job.size ? job.size : capacity - task->region_start;
    len = std::min(len, capacity - task->region_start);
    task->region_len = len / job.bs * job.bs;
    if (task->region_len == 0) {
      return absl::InvalidArgumentError(absl::StrCat("job ", i, ": region smaller than bs"));
    }
    task->ios.resize(static_cast<size_t>(job.iodepth));
    for (int s = job.iodepth - 1; s >= 0; --s) task->free_ios.push_back(static_cast<uint32_t>(s));
    task->group = config_.cgroups.GroupOf(i);
    task->ioc = config_.threads ? 0 : static_cast<uint32_t>(i);
    task->disp.cpu = task->cpu;
    task->disp.pid = 1000 + i;  // as dispatch.cc's fio pids
    task->disp.list.reserve(2 * kBlkMaxRequestCount);
    task->insert.reserve(2 * kBlkMaxRequestCount);
    task->dispatch.reserve(2 * kBlkMaxRequestCount);
    task->plug.rqs.reserve(2 * kBlkMaxRequestCount);
    task->plug.cached_tags.reserve(64);
    tasks_.push_back(std::move(task));
  }
  completed_ids_.reserve(1024);
  sim_.Reserve(tasks_.size() * static_cast<size_t>(job.iodepth + 2) + 16);
  measuring_ = job.ramp_ns == 0;
  ResetMeasurements();
  for (auto& t : tasks_) Wake(*t, 0);
  return absl::OkStatus();
}

std::string Engine::DebugState() const {
  std::string out = absl::StrCat("device in flight ", device_->in_flight());
  if (elv_) {
    absl::StrAppend(&out, "; elevator has_work ", elv_->HasWorkFor(0), ", staged inserts ",
                    elv_->staged());
  }
  for (size_t h = 0; h < hctxs_.size() && h < 4; ++h) {
    const Hctx& x = hctxs_[h];
    absl::StrAppend(&out, "; hctx", h, " dispatch ", x.dispatch.size(), " restart ", x.restart,
                    " run_pending ", x.run_pending, " kblockd ", x.kblockd.active());
  }
  int phases[4] = {0, 0, 0, 0};
  int inflight = 0;
  for (const auto& t : tasks_) {
    ++phases[static_cast<int>(t->phase)];
    inflight += t->inflight;
  }
  absl::StrAppend(&out, "; tasks submit/tagsleep/reap/done ", phases[0], "/", phases[1], "/",
                  phases[2], "/", phases[3], ", I/Os in flight ", inflight);
  return out;
}

SimTime Engine::time_limit() const {
  return config_.job.runtime_ns ? config_.job.ramp_ns + config_.job.runtime_ns : kNever;
}

void Engine::RunUntil(SimTime t) {
  if (!measuring_) {
    const SimTime ramp_end = config_.job.ramp_ns;
    sim_.RunUntil(std::min(t, ramp_end));
    if (t < ramp_end) return;
    measuring_ = true;
    ResetMeasurements();
  }
  sim_.RunUntil(t);
}

void Engine::OnEvent(uint32_t kind, uint64_t arg) {
  switch (kind) {
    case kTaskResume: {
      Task& task = *tasks_[arg];
      task.resume_pending = false;
      // A CPU runs one thing at a time: interrupts (completions) that ran while the
      // task was scheduled push it back.
      const SimTime busy = cpus_[task.cpu].busy_until();
      if (busy > sim_.now()) {
        Wake(task, busy);
        return;
      }
      Step(task);
      return;
    }
    case kDeviceCompletion:
      completion_event_ = EventId{};
      completion_at_ = kNever;
      ProcessCompletions();
      return;
    case kCqe:
      PostCqe(static_cast<uint32_t>(arg >> 32), static_cast<uint32_t>(arg));
      return;
    case kKblockdStep:
      KblockdStep(static_cast<uint32_t>(arg));
      return;
    case kElvTimer:
      ElvTimerFired();
      return;
    case kRunQueue: {
      Hctx& hctx = hctxs_[arg];
      const SimTime busy = cpus_[hctx.run_cpu].busy_until();
      if (busy > sim_.now()) {  // kblockd waits for its CPU
        sim_.Schedule(busy, this, kRunQueue, arg);
        return;
      }
      hctx.run_pending = false;
      RunHwQueue(static_cast<uint32_t>(arg));
      return;
    }
    default:
      return;
  }
}

void Engine::Wake(Task& task, SimTime at) {
  if (task.resume_pending) return;
  task.resume_pending = true;
  sim_.Schedule(std::max(at, sim_.now()), this, kTaskResume, task.index);
}

void Engine::Charge(Task& task, Stage stage, SimTime ns) {
  cpus_[task.cpu].Run(sim_.now(), stage, ns);
}

void Engine::UpdateInflight(int delta) {
  const SimTime now = sim_.now();
  if (measuring_)
    inflight_area_ += static_cast<double>(inflight_) * static_cast<double>(now - inflight_since_);
  inflight_since_ = now;
  inflight_ += delta;
}

void Engine::UpdateDeviceInflight(int delta) {
  const SimTime now = sim_.now();
  if (measuring_) {
    dev_inflight_area_ +=
        static_cast<double>(dev_inflight_) * static_cast<double>(now - dev_inflight_since_);
  }
  dev_inflight_since_ = now;
  dev_inflight_ += delta;
}

double Engine::MeanDeviceInflight() const {
  const SimTime now = sim_.now();
  if (now <= measure_from_) return 0;
  const double area = dev_inflight_area_ + static_cast<double>(dev_inflight_) *
                                               static_cast<double>(now - dev_inflight_since_);
  return area / static_cast<double>(now - measure_from_);
}

void Engine::ResetMeasurements() {
  counters_ = EngineCounters{};
  interval_counters_ = EngineCounters{};
  lat_.Clear();
  read_lat_.Clear();
  write_lat_.Clear();
  interval_lat_.Clear();
  inflight_area_ = 0;
  inflight_since_ = sim_.now();
  group_ios_.assign(config_.cgroups.weights.size() + 1, 0);
  dev_inflight_area_ = 0;
  dev_inflight_since_ = sim_.now();
  measure_from_ = sim_.now();
  if (elv_lock_) elv_lock_base_ = elv_lock_->stats();
  if (insert_lock_) insert_lock_base_ = insert_lock_->stats();
  cpu_stage_base_.assign(kStageCount, 0);
  for (int s = 0; s < kStageCount; ++s) cpu_stage_base_[s] = cpus_.TotalNs(static_cast<Stage>(s));
}

double Engine::MeanInflight() const {
  const SimTime now = sim_.now();
  if (now <= measure_from_) return 0;
  const double area =
      inflight_area_ + static_cast<double>(inflight_) * static_cast<double>(now - inflight_since_);
  return area / static_cast<double>(now - measure_from_);
}

SimTime Engine::CpuStageNs(Stage stage) const {
  return cpus_.TotalNs(stage) - cpu_stage_base_[static_cast<int>(stage)];
}

LockStats Engine::LockStatsSinceRamp(const Spinlock& lock) const {
  const LockStats& base = &lock == insert_lock_.get() ? insert_lock_base_ : elv_lock_base_;
  LockStats d = lock.stats();
  d.acquisitions -= base.acquisitions;
  d.contended -= base.contended;
  d.failed_try -= base.failed_try;
  d.spin_ns -= base.spin_ns;
  d.hold_ns -= base.hold_ns;
  d.busy_ns -= base.busy_ns;
  d.multiplier_sum -= base.multiplier_sum;
  return d;
}

SimTime Engine::CpuBusyNs() const {
  SimTime total = 0;
  for (int s = 0; s < kStageCount; ++s) total += CpuStageNs(static_cast<Stage>(s));
  return total;
}

void Engine::TakeInterval(LatencyHistogram* lat, EngineCounters* counters) {
  *lat = interval_lat_;
  *counters = interval_counters_;
  interval_lat_.Clear();
  interval_counters_ = EngineCounters{};
}

}  // namespace blkbench::engine
