// The fio job loop (fio's do_io with the io_uring or psync engine): keep iodepth I/Os in
// flight, submit iodepth_batch_submit per io_uring_enter under one plug, then reap
// between iodepth_batch_complete_min and _max completions.
#include <algorithm>

#include "engine/model/completion.h"
#include "engine/model/hw_queues.h"
#include "engine/model/measurements.h"
#include "engine/model/sched_path.h"
#include "engine/model/submission.h"
#include "engine/model/tracer.h"

namespace blkbench::engine {

// One unit of a task's work at q_.sim.now(); it charges CPU time and, unless the task
// goes to sleep (tag wait, waiting for completions, finished), resumes itself when its
// CPU is free again.
void Submission::Step(Task& task) {
  // Elevator path: a pending insertion, then the queue run it triggers, come first.
  if (!task.insert.empty()) {
    q_.sched->InsertStep(task);
    q_.Wake(task, q_.cpus[task.cpu].busy_until());
    return;
  }
  if (task.disp.active()) {
    q_.sched->DispatchStep(task.disp);
    q_.Wake(task, q_.cpus[task.cpu].busy_until());
    return;
  }
  if (task.dispatch_pos < task.dispatch.size()) {
    q_.completion->IssueOne(task);
    q_.Wake(task, q_.cpus[task.cpu].busy_until());
    return;
  }
  switch (task.phase) {
    case TaskPhase::kSubmit:
      if (!task.has_bio) {
        if (task.batch_left == 0 || task.done_issuing) {
          // blk_finish_plug() at the end of io_submit_sqes().
          FinishPlug(task);
          task.phase = TaskPhase::kReap;
          if (!task.done_issuing && task.inflight < static_cast<int>(task.job->iodepth))
            StartBatch(task);
          q_.Wake(task, q_.cpus[task.cpu].busy_until());
          return;
        }
        BeginBio(task);
      }
      SubmitPiece(task);
      if (task.phase == TaskPhase::kTagSleep && task.dispatch_pos >= task.dispatch.size() &&
          task.insert.empty() && !task.disp.active() && !task.woken) {
        return;  // io_schedule(): asleep until a tag free wakes us
      }
      q_.Wake(task, q_.cpus[task.cpu].busy_until());
      return;
    case TaskPhase::kTagSleep: {
      if (!task.woken) return;  // still asleep (ran only to flush the plug)
      task.woken = false;
      const int tag = RetryTagAfterWake(task);
      if (tag < 0) return;  // lost the race; back on a waitqueue
      task.phase = TaskPhase::kSubmit;
      QueueRequest(task, tag);
      q_.Wake(task, q_.cpus[task.cpu].busy_until());
      return;
    }
    case TaskPhase::kReap:
      ReapStep(task);
      return;
    case TaskPhase::kFinished:
      return;
  }
}

// io_uring_enter(to_submit = n): io_submit_state_start() plugs with nr_ios =
// min(n, BLK_MAX_REQUEST_COUNT) when more than IO_PLUG_THRESHOLD I/Os are submitted.
void Submission::StartBatch(Task& task) {
  const JobOptions& job = *task.job;
  const int room = static_cast<int>(job.iodepth) - task.inflight;
  int n = std::min(static_cast<int>(job.batch_submit), room);
  if (job.paced()) {
    // fio rate_ddir / handle_thinktime: hold new I/O until it is due and while a think
    // waits for the queue to drain; a rated job submits one I/O per due time.
    if (q_.sim.now() < task.not_before || task.think_pending) return;
    if (job.thinktime_ns != 0) {
      n = std::min<int>(n, static_cast<int>(job.thinktime_blocks - task.think_issued));
    }
    if (job.rate_bps[0] | job.rate_bps[1] | job.rate_iops[0] | job.rate_iops[1]) n = std::min(n, 1);
  }
  if (n <= 0 || task.done_issuing) return;
  task.phase = TaskPhase::kSubmit;
  task.batch_left = n;
  task.plug.active = n > kIoPlugThreshold;
  task.plug.nr_ios = std::min(n, kBlkMaxRequestCount);
}

// io_uring_enter(min_complete) + fio's io_u_queued_complete(): wait for at least
// iodepth_batch_complete_min completions, reap up to _max, then refill the queue.
void Submission::ReapStep(Task& task) {
  const JobOptions& job = *task.job;
  if (task.inflight == 0) {
    if (task.done_issuing) {
      task.phase = TaskPhase::kFinished;
      ++q_.finished_tasks;
      return;
    }
    if (job.thinktime_ns != 0 &&
        (task.think_pending || task.think_issued >= job.thinktime_blocks)) {
      // The queue drained: think (the model idles for thinktime_spin too).
      task.think_pending = false;
      task.think_issued = 0;
      task.think_completed = 0;
      task.not_before = std::max<uint64_t>(task.not_before, q_.sim.now() + job.thinktime_ns);
    }
    StartBatch(task);
    q_.Wake(task, std::max<uint64_t>(q_.sim.now(), task.not_before));
    return;
  }
  const int need = std::min(static_cast<int>(job.complete_min), task.inflight);
  if (task.cqes < need) return;  // asleep in io_cqring_wait(); PostCqe wakes us
  const int reaped = std::min(task.cqes, static_cast<int>(job.complete_max));
  task.cqes -= reaped;
  if (q_.nr_devices > 1) {
    for (int i = 0; i < reaped; ++i) {
      --task.dev_pending[task.cqe_devs.front()];
      task.cqe_devs.pop_front();
    }
  }
  task.inflight -= reaped;
  if (job.thinktime_ns != 0) {
    task.think_completed += static_cast<uint32_t>(reaped);
    if (task.think_completed >= job.thinktime_blocks) task.think_pending = true;
  }
  if (task.done_issuing && task.inflight == 0) {
    task.phase = TaskPhase::kFinished;
    ++q_.finished_tasks;
    return;
  }
  if (!task.done_issuing) StartBatch(task);
  q_.Wake(task, q_.sim.now());
}

// fio usec_for_io: the job's next I/O is due one interval after this one's due time — the
// longer of len/rate and 1/rate_iops of its direction, or an exponential gap with that
// mean for rate_process=poisson. One schedule per job (fio keeps one per direction).
void Submission::Pace(Task& task, bool write, uint64_t len) {
  const JobOptions& job = *task.job;
  if (job.thinktime_ns != 0) ++task.think_issued;
  uint64_t interval = 0;
  if (job.rate_bps[write] != 0) interval = len * 1'000'000'000u / job.rate_bps[write];
  if (job.rate_iops[write] != 0) {
    interval = std::max<uint64_t>(interval, 1'000'000'000u / job.rate_iops[write]);
  }
  if (interval == 0) return;
  if (job.rate_poisson) {
    interval = static_cast<uint64_t>(task.rng.Exponential(static_cast<double>(interval)));
  }
  task.not_before += interval;
}

// fio's get_next_file() over the task's files (engine.devices): after file_service_nr
// I/Os the job moves to the next file in turn (roundrobin) or to one drawn at random,
// which may be the same (random); with t/io_uring, its init_io(): to the next once the
// current one holds file_depth = ceil(iodepth / files) unreaped I/Os. Each device keeps
// its own sequential position.
void Submission::NextFile(Task& task) {
  const JobOptions& job = *task.job;
  const auto nr_files = static_cast<uint32_t>(task.files.size());
  uint32_t pos = task.file_pos;
  if (job.file_service == FileService::kUring) {
    const uint32_t file_depth = (job.iodepth + nr_files - 1) / nr_files;
    if (task.dev_pending[task.dev] >= file_depth) pos = (pos + 1) % nr_files;
  } else {
    if (task.file_left == 0) {
      pos = job.file_service == FileService::kRandom
                ? static_cast<uint32_t>(task.rng.Uniform(nr_files))
                : (pos + 1) % nr_files;
      task.file_left = job.file_service_nr;
    }
    --task.file_left;
  }
  const uint32_t next = task.files[pos];
  task.file_pos = pos;
  ++task.dev_pending[next];
  if (next == task.dev) return;
  task.dev_seq_next[task.dev] = task.seq_next;
  task.seq_next = task.dev_seq_next[next];
  task.dev = next;
  task.hctx = next * q_.hw_per_device + task.hctx_base;
}

namespace {

// A random position in [0, n) of `unit`-sized blocks: uniform, or fio's zoned/zoned_abs
// (cell_checks refuses the other distributions for simulated devices).
uint64_t RandomPosition(const JobOptions& job, uint64_t n, uint64_t unit, Rng& rng) {
  if (job.distribution == RandomDist::kZoned || job.distribution == RandomDist::kZonedAbs) {
    return ZonedPosition(job.zones, job.distribution == RandomDist::kZonedAbs, n, unit, rng);
  }
  return rng.Uniform(n);
}

// fio get_next_buflen: a bssplit share, else a multiple of the smallest size up to the
// largest (bsrange).
uint64_t NextLen(const BlockSizes& d, Rng& rng) {
  if (d.split.empty()) return d.min * (1 + rng.Uniform(d.max / d.min));
  const uint64_t u = rng.Uniform(100);
  uint64_t sum = 0;
  for (const BsShare& e : d.split) {
    sum += e.percent;
    if (u < sum) return e.bs;
  }
  return d.split.back().bs;
}

}  // namespace

// fio's get_io_u(): the next offset (random, aligned to bs, or sequential with wrap)
// and direction for a new bio.
void Submission::BeginBio(Task& task) {
  const JobOptions& job = *task.job;
  if (q_.nr_devices > 1) NextFile(task);
  uint64_t offset;
  uint64_t len = job.bs;
  bool write = job.read_percent == 0;
  if (job.per_direction_bs()) {
    // Reads and writes size apart (fio's bs=R,W and the like): the direction comes first,
    // as in fio's get_io_u, then its size and an offset aligned to its blockalign (its
    // smallest size unless set).
    if (job.read_percent > 0 && job.read_percent < 100) {
      write = task.rng.Uniform(100) >= static_cast<uint64_t>(job.read_percent);
    }
    const BlockSizes& d = job.sizes[write];
    len = NextLen(d, task.rng);
    if (job.random) {
      offset =
          RandomPosition(job, (task.region_len - len) / d.align + 1, d.align, task.rng) * d.align;
    } else {
      offset = task.seq_next + len > task.region_len ? 0 : task.seq_next;
      task.seq_next = offset + len;
    }
  } else {
    // One set of sizes: the size and offset are drawn before the direction (the order
    // every recorded seed's trace follows). Random offsets align to blockalign (bs unless
    // set): (region - len) / align + 1 positions, region / bs with a fixed bs.
    const uint64_t align = job.sizes[0].align;
    if (job.variable_bs()) {
      len = NextLen(job.sizes[0], task.rng);
      if (job.random) {
        offset = RandomPosition(job, (task.region_len - len) / align + 1, align, task.rng) * align;
      } else {
        offset = task.seq_next + len > task.region_len ? 0 : task.seq_next;
        task.seq_next = offset + len;
      }
    } else if (job.random) {
      offset = RandomPosition(job, (task.region_len - len) / align + 1, align, task.rng) * align;
    } else {
      offset = task.seq_next;
      task.seq_next = offset + job.bs >= task.region_len ? 0 : offset + job.bs;
    }
    if (job.read_percent > 0 && job.read_percent < 100) {
      write = task.rng.Uniform(100) >= static_cast<uint64_t>(job.read_percent);
    }
  }
  const uint32_t slot = task.free_ios.back();
  task.free_ios.pop_back();
  IoSlot& io = task.ios[slot];
  const uint64_t sectors = len / 512;
  const uint64_t max = q_.config.queue.max_sectors;
  io.start = q_.sim.now();
  io.pieces_left = static_cast<uint32_t>((sectors + max - 1) / max);
  io.bytes = static_cast<uint32_t>(len);
  io.write = write;
  io.dev = task.dev;
  task.has_bio = true;
  task.bio_io = slot;
  task.bio_sector = (task.region_start + offset) / 512;
  task.bio_sectors_left = sectors;
  task.bio_write = write;
  task.bio_split = io.pieces_left > 1;
  --task.batch_left;
  ++task.inflight;
  q_.measurements->UpdateInflight(+1);
  task.bytes_issued += len;
  if (job.paced()) Pace(task, write, len);
  if (job.bytes_per_job != 0 && task.bytes_issued >= job.bytes_per_job) task.done_issuing = true;
}

}  // namespace blkbench::engine
