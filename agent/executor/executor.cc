// IoExecutor::Run: plan → shared stats → launch jobs → start barrier → sample until all
// jobs end (or fail / cancel) → result. fio backend.c run_threads() in miniature.
#include "agent/executor/executor.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "agent/executor/engine_registry.h"
#include "agent/executor/io_engine.h"
#include "agent/executor/job.h"
#include "agent/executor/job_launcher.h"
#include "agent/executor/job_plan.h"
#include "agent/executor/run_stats.h"
#include "agent/executor/shared_state.h"
#include "common/resolved_job.h"

namespace blkbench {
namespace {

// How often the parent looks at ctx.cancel and at child processes when no job event
// wakes it earlier; bounds the cancel latency.
constexpr int64_t kPollNs = 10'000'000;  // 10 ms

struct JobCounts {
  uint32_t ready = 0, done = 0, failed = 0;
  int first_failed = -1;
};

JobCounts CountStates(const SharedArea& area) {
  JobCounts c;
  for (uint32_t i = 0; i < area.num_jobs(); ++i) {
    switch (area.job(i).state.load(std::memory_order_acquire)) {
      case JobState::kReady:
        ++c.ready;
        break;
      case JobState::kDone:
        ++c.done;
        break;
      case JobState::kFailed:
        ++c.failed;
        if (c.first_failed < 0) c.first_failed = static_cast<int>(i);
        break;
      case JobState::kStarting:
        break;
    }
  }
  return c;
}

absl::Status JobError(const SharedArea& area, uint32_t job) {
  const JobShared& s = area.job(job);
  return absl::Status(static_cast<absl::StatusCode>(s.status_code.load(std::memory_order_relaxed)),
                      s.error);
}

// On cancel, process jobs get this long to drain their in-flight I/O and exit before
// they are SIGKILLed: a killed job's I/O completes (and keeps the device open) after Run
// returned, which surprises whoever restores or detaches the device next.
constexpr int64_t kCancelGraceNs = 250'000'000;  // 250 ms

bool AllEnded(const SharedArea& area) {
  const JobCounts c = CountStates(area);
  return c.done + c.failed == area.num_jobs();
}

// Owns the launched jobs of one run and tears them down on every exit path.
class RunGuard {
 public:
  RunGuard(SharedArea& area, bool threads) : area_(area), launcher_(threads) {}
  ~RunGuard() { Stop(kCancelGraceNs); }
  JobLauncher& launcher() { return launcher_; }
  // Tells jobs to stop (also releasing ones still waiting for go) and waits for all of
  // them. kill_after_ns >= 0: process jobs still running after that long are SIGKILLed.
  void Stop(int64_t kill_after_ns) {
    Control& ctl = area_.control();
    ctl.stop.store(1, std::memory_order_relaxed);
    uint32_t expected = kGoWait;
    ctl.go.compare_exchange_strong(expected, kGoAbort, std::memory_order_release);
    FutexWakeAll(ctl.go);
    if (kill_after_ns >= 0) {
      const uint64_t deadline = MonotonicNs() + static_cast<uint64_t>(kill_after_ns);
      for (;;) {
        const uint32_t seen = ctl.events.load(std::memory_order_acquire);
        const uint64_t now = MonotonicNs();
        if (AllEnded(area_) || now >= deadline || !launcher_.CheckChildren(area_).ok()) break;
        FutexWait(ctl.events, seen,
                  static_cast<int64_t>(std::min<uint64_t>(deadline - now, kPollNs)));
      }
      launcher_.KillAll();
    }
    launcher_.JoinAll();
  }

 private:
  SharedArea& area_;
  JobLauncher launcher_;
};

bool Cancelled(const RunContext& ctx) {
  return ctx.cancel != nullptr && ctx.cancel->load(std::memory_order_relaxed);
}

// Sleeps until a job changes state, at most timeout_ns.
void WaitForEvent(Control& ctl, uint32_t seen, int64_t timeout_ns) {
  if (ctl.events.load(std::memory_order_acquire) == seen) {
    FutexWait(ctl.events, seen, std::max<int64_t>(timeout_ns, 0));
  }
}

}  // namespace

absl::StatusOr<v1::RunResult> IoExecutor::Run(const RunContext& ctx) {
  absl::StatusOr<RunPlan> planned = BuildRunPlan(ctx);
  if (!planned.ok()) return planned.status();
  RunPlan& plan = *planned;
  const uint32_t n = static_cast<uint32_t>(plan.jobs.size());
  absl::StatusOr<std::unique_ptr<SharedArea>> created =
      SharedArea::Create(n, options_.trace_ios_per_job);
  if (!created.ok()) return created.status();
  SharedArea& area = **created;
  Control& ctl = area.control();
  for (uint32_t i = 0; i < n; ++i) {
    const ResolvedJob& spec = plan.specs[plan.jobs[i].named];
    plan.jobs[i].path = plan.path.c_str();
    plan.jobs[i].job = &spec;
    plan.jobs[i].io.bssplit = spec.sizes[0].split.data();
    plan.jobs[i].io.write_bssplit = spec.sizes[1].split.data();
    plan.jobs[i].io.zones = spec.zones;
    plan.jobs[i].trace = area.trace(i);
    plan.jobs[i].trace_capacity = options_.trace_ios_per_job;
  }
  const EngineRegistry& registry =
      options_.engines != nullptr ? *options_.engines : EngineRegistry::Builtin();
  // Each job's engine: named jobs may use different ones.
  std::vector<const EngineType*> types;
  for (size_t k = 0; k < plan.specs.size(); ++k) {
    const ResolvedJob& spec = plan.specs[k];
    const std::string who =
        plan.names[k].empty() ? "job " : absl::StrCat("job '", plan.names[k], "' ");
    const std::string engine_name =
        options_.engine_override.empty() ? std::string(spec.engine_name) : options_.engine_override;
    const EngineType* type = registry.Find(engine_name);
    if (type == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat(who, "option ioengine: no executor engine named ", engine_name));
    }
    // ResolveJob checked the switches against the spec's engine; this covers an engine
    // registered beside the built-ins (the same capability flags).
    const struct {
      const char* option;
      bool set;
      uint32_t cap;
    } needs[] = {{"hipri", spec.hipri, kEngineHipri},
                 {"fixedbufs", spec.fixedbufs, kEngineFixedBufs},
                 {"registerfiles", spec.registerfiles, kEngineRegisterFiles},
                 {"sqthread_poll", spec.sqthread_poll, kEngineSqThreadPoll}};
    for (const auto& need : needs) {
      if (need.set && (type->caps & need.cap) == 0) {
        return absl::InvalidArgumentError(
            absl::StrCat(who, "option ", need.option, ": not supported by ioengine ", engine_name));
      }
    }
    types.push_back(type);
  }
  const EngineType* type = types[0];  // RunResult.runner
  // Made here, not in the job: a fork()ed job must not allocate (io_engine.h).
  std::vector<std::unique_ptr<IoEngine>> engines;
  for (uint32_t i = 0; i < n; ++i) {
    const EngineType* own = types[plan.jobs[i].named];
    plan.jobs[i].engine_name = own->name.c_str();
    engines.push_back(own->make());
  }
  if (Cancelled(ctx)) return absl::CancelledError("run cancelled before start");

  // Declared after `engines`: the guard joins the jobs before the engines are destroyed.
  RunGuard guard(area, plan.job.thread);
  for (uint32_t i = 0; i < n; ++i) {
    const JobPlan* job = &plan.jobs[i];
    JobShared* out = &area.job(i);
    IoEngine* engine = engines[i].get();
    absl::Status s =
        guard.launcher().Start(i, [job, engine, &ctl, out] { RunJob(*job, *engine, ctl, *out); });
    if (!s.ok()) return s;
  }

  // Start barrier: every job opened the target and set up its ring before the clock
  // starts, so setup errors (e.g. an unsupported ring flag) surface before any I/O.
  for (;;) {
    const uint32_t seen = ctl.events.load(std::memory_order_acquire);
    const JobCounts c = CountStates(area);
    if (c.failed > 0) {
      guard.Stop(/*kill_after_ns=*/-1);
      return JobError(area, static_cast<uint32_t>(c.first_failed));
    }
    if (c.ready == n) break;
    if (Cancelled(ctx)) return absl::CancelledError("run cancelled during job setup");
    if (absl::Status s = guard.launcher().CheckChildren(area); !s.ok()) return s;
    WaitForEvent(ctl, seen, kPollNs);
  }

  // Every job is set up and waits for go, so none has issued I/O: place them now, and bfq
  // charges all their requests to their cgroups.
  if (ctx.place_job) {
    for (uint32_t i = 0; i < n; ++i) {
      if (absl::Status s = ctx.place_job(i, area.job(i).tid.load(std::memory_order_relaxed));
          !s.ok()) {
        guard.Stop(/*kill_after_ns=*/-1);
        return s;
      }
    }
  }

  const uint64_t t0 = MonotonicNs();
  // fio: ramp_time starts after startdelay; the jobs sleep startdelay themselves. Named
  // jobs with different startdelays are measured once the last has started.
  uint64_t startdelay_ns = plan.job.startdelay_ns;
  for (const ResolvedJob& spec : plan.specs)
    startdelay_ns = std::max(startdelay_ns, spec.startdelay_ns);
  const uint64_t measure_start = t0 + startdelay_ns + plan.job.ramp_ns;
  ctl.measure_start_ns.store(measure_start, std::memory_order_relaxed);
  ctl.deadline_ns.store(plan.job.runtime_ns ? measure_start + plan.job.runtime_ns : 0,
                        std::memory_order_relaxed);
  ctl.go.store(kGoRun, std::memory_order_release);
  FutexWakeAll(ctl.go);

  // The cell's jobs as thread slices: per named job, or one over every thread.
  std::vector<JobSlice> slices;
  for (const JobPlan& job : plan.jobs) {
    if (ctx.cell.jobs_size() == 0) {
      if (slices.empty()) slices.push_back({"", job.index, 0});
    } else if (slices.size() <= job.named) {
      slices.push_back({plan.names[job.named], job.index, 0});
    }
    ++slices.back().threads;
  }
  auto sampler = std::make_unique<Sampler>(area, slices, ctx.on_sample, measure_start);
  const int64_t interval = ctx.sample_interval.count();
  uint64_t next_sample =
      interval > 0 ? measure_start + static_cast<uint64_t>(interval) : UINT64_MAX;
  for (;;) {
    const uint32_t seen = ctl.events.load(std::memory_order_acquire);
    const JobCounts c = CountStates(area);
    if (c.failed > 0) {
      guard.Stop(/*kill_after_ns=*/-1);  // let the others drain, like fio on a td error
      return JobError(area, static_cast<uint32_t>(c.first_failed));
    }
    if (c.done == n) break;
    if (Cancelled(ctx)) {
      guard.Stop(kCancelGraceNs);
      return absl::CancelledError("run cancelled");
    }
    if (absl::Status s = guard.launcher().CheckChildren(area); !s.ok()) return s;
    uint64_t now = MonotonicNs();
    if (now >= next_sample) {
      sampler->Emit(now);
      next_sample += static_cast<uint64_t>(interval);
      if (next_sample <= now) next_sample = now + static_cast<uint64_t>(interval);  // overran
      now = MonotonicNs();
    }
    const uint64_t until_sample = next_sample > now ? next_sample - now : 0;
    WaitForEvent(ctl, seen, static_cast<int64_t>(std::min<uint64_t>(until_sample, kPollNs)));
  }
  guard.launcher().JoinAll();

  absl::StatusOr<v1::RunResult> result = BuildResult(area, measure_start, type->name);
  if (!result.ok()) return result.status();
  sampler->EmitFinal(result->duration_ns());
  // A sample taken after a job's last I/O but before it published its end time ends
  // later than that I/O: the run was observed until then, so the duration (and the rates)
  // run to the last sample's end and the samples tile [0, duration] exactly.
  if (sampler->offset_ns() > result->duration_ns()) SetDuration(*result, sampler->offset_ns());
  if (ctx.cell.jobs_size() > 0) {
    if (absl::Status s = AddJobResults(area, slices, *result); !s.ok()) return s;
  }
  if (options_.on_trace) {
    for (uint32_t i = 0; i < n; ++i) {
      const size_t len = area.job(i).trace_len.load(std::memory_order_relaxed);
      options_.on_trace(i, std::span<const IoTrace>(area.trace(i), len));
    }
  }
  return result;
}

std::unique_ptr<Runner> NewIoExecutor(ExecutorOptions options) {
  return std::make_unique<IoExecutor>(std::move(options));
}

}  // namespace blkbench
