// EngineRunner: drives an Engine through the cell's simulated time, emits per-interval
// Samples and converts the measurements into a RunResult.
#include "engine/model/engine_runner.h"

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/model/config.h"
#include "engine/model/engine.h"

namespace blkbench::engine {
namespace {

constexpr SimTime kCancelCheckNs = 1'000'000;                // 1 ms simulated
constexpr SimTime kBytesOnlyLimitNs = 3'600'000'000'000ULL;  // safety cap: 1 h simulated

void AddCounters(const EngineCounters& c, v1::IoCounters* out) {
  out->set_read_ios(c.read_ios);
  out->set_write_ios(c.write_ios);
  out->set_read_bytes(c.read_bytes);
  out->set_write_bytes(c.write_bytes);
}

void AddJobCounters(const JobTotals& t, v1::IoCounters* out) {
  out->set_read_ios(t.read_ios);
  out->set_write_ios(t.write_ios);
  out->set_read_bytes(t.read_bytes);
  out->set_write_bytes(t.write_bytes);
}

void FillInternals(const Engine& e, int64_t wall_ns, v1::RunResult* r) {
  auto& m = *r->mutable_internals();
  const EngineCounters& c = e.counters();
  const uint64_t ios = c.read_ios + c.write_ios;
  // A double holds 52 bits exactly; the low 52 bits identify a trace well enough.
  m["engine.trace_hash"] = static_cast<double>(e.trace_hash() & ((uint64_t{1} << 52) - 1));
  m["engine.events"] = static_cast<double>(e.events());
  m["engine.sim_ns"] = static_cast<double>(e.now());
  m["engine.wall_ns"] = static_cast<double>(wall_ns);
  m["tags.single_allocs"] = static_cast<double>(c.single_allocs);
  m["tags.batch_allocs"] = static_cast<double>(c.batch_allocs);
  m["tags.batch_requested"] = static_cast<double>(c.batch_requested);
  m["tags.batch_obtained"] = static_cast<double>(c.batch_obtained);
  m["tags.waits"] = static_cast<double>(c.tag_waits);
  m["tags.wakeups"] = static_cast<double>(c.wakeups);
  m["tags.preempts"] = static_cast<double>(c.tag_preempts);
  m["tags.continuation_waits"] = static_cast<double>(c.continuation_waits);
  m["plug.flushes"] = static_cast<double>(c.plug_flushes);
  m["split.pieces"] = static_cast<double>(c.split_pieces);
  m["dispatch.requests"] = static_cast<double>(c.dispatched);
  m["dispatch.requeues"] = static_cast<double>(c.requeues);
  m["dispatch.restarts"] = static_cast<double>(c.restarts);
  m["merges.plug"] = static_cast<double>(c.plug_merges);
  m["completion.ipis"] = static_cast<double>(c.completion_ipis);
  m["completion.remote"] = static_cast<double>(c.remote_completions);
  m["seq_ratio"] = c.dispatched ? static_cast<double>(c.sequential_dispatches) /
                                      static_cast<double>(c.dispatched)
                                : 0.0;
  m["inflight.mean"] = e.MeanInflight();
  m["device.inflight_mean"] = e.MeanDeviceInflight();
  if (e.group_ios().size() > 1) {
    for (size_t g = 0; g < e.group_ios().size(); ++g) {
      m[absl::StrCat("cgroup.", g, ".ios")] = static_cast<double>(e.group_ios()[g]);
    }
  }
  m["sched.tags"] = e.sched_tags();
  m["driver.tags"] = e.driver_tags();
  if (e.elevator() != nullptr) {
    m["elv.bio_merges"] = static_cast<double>(c.elv_bio_merges);
    m["elv.insert_merges"] = static_cast<double>(c.elv_insert_merges);
    m["elv.dispatch_calls"] = static_cast<double>(c.elv_dispatch_calls);
    m["elv.dispatch_null"] = static_cast<double>(c.elv_dispatch_null);
    m["elv.dispatch_skipped"] = static_cast<double>(c.elv_dispatch_skipped);
    m["elv.timer_fires"] = static_cast<double>(c.elv_timer_fires);
    if (const ElevatorCounters& ec = e.elevator()->counters(); ec.queues_created > 0) {
      m["elv.queues"] = static_cast<double>(ec.queues_created);
      m["elv.queues_merged"] = static_cast<double>(ec.queues_merged);
    }
    m["dispatch.inversions"] = static_cast<double>(c.dispatch_inversions);
    m["dispatch.inversion_ratio"] = c.dispatched ? static_cast<double>(c.dispatch_inversions) /
                                                       static_cast<double>(c.dispatched)
                                                 : 0.0;
    m["dispatch.in_order_ratio"] =
        c.dispatched ? static_cast<double>(c.dispatch_in_order) / static_cast<double>(c.dispatched)
                     : 0.0;
    m["dispatch.hctx_in_order_ratio"] =
        c.dispatched
            ? static_cast<double>(c.dispatch_hctx_in_order) / static_cast<double>(c.dispatched)
            : 0.0;
    m["dispatch.inverted_pairs_per_io"] =
        c.dispatched
            ? static_cast<double>(c.dispatch_inverted_pairs) / static_cast<double>(c.dispatched)
            : 0.0;
    m["dispatch.driver_tag_fails"] = static_cast<double>(c.driver_tag_fails);
    m["dispatch.budget_fails"] = static_cast<double>(c.budget_fails);
  }
  // Per lock: acquisitions per I/O, contended share, spin ns per I/O and per
  // acquisition, and hold ns per acquisition ("lock.<name>.*"; name without "->").
  for (const Spinlock* lock : {e.elevator_lock(), e.insert_lock()}) {
    if (lock == nullptr) continue;
    std::string name = lock->name();
    for (char& ch : name) {
      if (ch == '-' || ch == '>') ch = '_';
    }
    name.erase(
        std::unique(name.begin(), name.end(), [](char a, char b) { return a == '_' && b == '_'; }),
        name.end());
    const LockStats st = e.LockStatsSinceRamp(*lock);
    const double acq = static_cast<double>(st.acquisitions);
    const double per_io = ios ? 1.0 / static_cast<double>(ios) : 0.0;
    const std::string p = absl::StrCat("lock.", name, ".");
    m[p + "acquisitions_per_io"] = acq * per_io;
    m[p + "contended_share"] = st.contended_share();
    m[p + "spin_ns_per_io"] = static_cast<double>(st.spin_ns) * per_io;
    m[p + "spin_ns_per_acquisition"] = acq > 0 ? static_cast<double>(st.spin_ns) / acq : 0.0;
    m[p + "hold_ns_per_acquisition"] = acq > 0 ? static_cast<double>(st.hold_ns) / acq : 0.0;
    m[p + "cycle_ns"] = st.cycle_ns();
    // Where the takes come from: "lock.<name>.site.<stage>.*" for each call site that took
    // it (merge = bio_merge, insert, dispatch, completion, other = timer/has_work).
    for (int s = 0; s < kStageCount; ++s) {
      const Stage site = static_cast<Stage>(s);
      const SchedPath::SiteStats ss = e.LockSiteSinceRamp(*lock, site);
      if (ss.acquisitions == 0) continue;
      const std::string q = absl::StrCat(p, "site.", std::string(StageName(site)), ".");
      m[q + "acquisitions_per_io"] = static_cast<double>(ss.acquisitions) * per_io;
      m[q + "spin_ns_per_io"] = static_cast<double>(ss.spin_ns) * per_io;
      m[q + "hold_ns_per_acquisition"] =
          static_cast<double>(ss.hold_ns) / static_cast<double>(ss.acquisitions);
    }
  }
  for (int s = 0; s < kStageCount; ++s) {
    const Stage stage = static_cast<Stage>(s);
    m[absl::StrCat("cpu_ns_per_io.", std::string(StageName(stage)))] =
        ios ? static_cast<double>(e.CpuStageNs(stage)) / static_cast<double>(ios) : 0.0;
  }
}

class EngineRunner final : public Runner {
 public:
  absl::StatusOr<v1::RunResult> Run(const RunContext& ctx) override {
    const auto wall_start = std::chrono::steady_clock::now();
    absl::StatusOr<EngineConfig> config = DeriveConfig(ctx.cell);
    if (!config.ok()) return config.status();
    absl::StatusOr<std::unique_ptr<Engine>> created = Engine::Create(*config, ctx.target_size);
    if (!created.ok()) return created.status();
    Engine& e = **created;
    if (ctx.trace != nullptr) e.set_trace_sink(ctx.trace);

    const SimTime start = e.measure_start();
    const SimTime limit = e.time_limit() == kNever ? start + kBytesOnlyLimitNs : e.time_limit();
    const SimTime interval =
        std::max<SimTime>(1, static_cast<SimTime>(ctx.sample_interval.count()));
    auto cancelled = [&] { return ctx.cancel != nullptr && ctx.cancel->load(); };

    // The ramp, in cancellable steps.
    while (e.now() < start) {
      e.RunUntil(std::min(start, e.now() + kCancelCheckNs));
      if (cancelled()) return absl::CancelledError("engine run cancelled during ramp");
    }
    e.RunUntil(start);  // resets the measurements even when there is no ramp
    uint64_t seq = 0;
    SimTime sample_start = start;
    bool done = false;
    while (!done) {
      const SimTime sample_end = std::min(limit, sample_start + interval);
      while (e.now() < sample_end && !e.all_done()) {
        e.RunUntil(std::min(sample_end, e.now() + kCancelCheckNs));
        if (cancelled()) return absl::CancelledError("engine run cancelled");
        if (e.stalled()) {
          return absl::InternalError(absl::StrCat(
              "engine stalled at ", e.now(), " ns: every job is asleep and nothing is pending (",
              e.DebugState(), ")"));
        }
      }
      done = e.all_done() || sample_end >= limit;
      const SimTime end = e.all_done() ? std::max(e.last_cqe_time(), sample_start) : sample_end;
      if (ctx.on_sample && (end > sample_start || seq == 0)) {
        v1::Sample s;
        s.set_seq(++seq);
        s.set_offset_ns(end - start);
        s.set_interval_ns(end - sample_start);
        LatencyHistogram lat;
        EngineCounters c;
        std::vector<JobTotals> jobs;
        e.TakeInterval(&lat, &c, &jobs);
        AddCounters(c, s.mutable_io());
        lat.ToProto(s.mutable_lat());
        for (size_t j = 0; j < jobs.size(); ++j) {
          v1::JobInterval* ji = s.add_jobs();
          ji->set_index(static_cast<uint32_t>(j));
          if (j < e.jobs().size()) ji->set_name(e.jobs()[j].name);
          AddJobCounters(jobs[j], ji->mutable_io());
          jobs[j].read_lat.ToProto(ji->mutable_read_lat());
          jobs[j].write_lat.ToProto(ji->mutable_write_lat());
        }
        ctx.on_sample(s);
      }
      sample_start = end;
    }
    const SimTime duration = std::max<SimTime>(1, sample_start - start);

    v1::RunResult r;
    const EngineCounters& c = e.counters();
    const uint64_t ios = c.read_ios + c.write_ios;
    const double seconds = static_cast<double>(duration) * 1e-9;
    r.set_duration_ns(duration);
    AddCounters(c, r.mutable_io());
    r.set_iops(static_cast<double>(ios) / seconds);
    r.set_bw_bytes_per_sec(static_cast<double>(c.read_bytes + c.write_bytes) / seconds);
    e.lat().ToProto(r.mutable_lat());
    e.read_lat().ToProto(r.mutable_read_lat());
    e.write_lat().ToProto(r.mutable_write_lat());
    *r.mutable_lat_summary() = e.lat().Summary();
    r.set_usr_cpu_ns(0);
    r.set_sys_cpu_ns(e.CpuBusyNs());
    r.set_runner("engine");
    // Per named job; a one-job cell reports only the total.
    for (size_t j = 0; j < e.jobs().size() && !e.jobs()[j].name.empty(); ++j) {
      const JobTotals& t = e.job_totals()[j];
      v1::JobResult* jr = r.add_jobs();
      jr->set_name(e.jobs()[j].name);
      AddJobCounters(t, jr->mutable_io());
      jr->set_iops(static_cast<double>(t.read_ios + t.write_ios) / seconds);
      jr->set_bw_bytes_per_sec(static_cast<double>(t.read_bytes + t.write_bytes) / seconds);
      t.lat.ToProto(jr->mutable_lat());
      t.read_lat.ToProto(jr->mutable_read_lat());
      t.write_lat.ToProto(jr->mutable_write_lat());
      *jr->mutable_lat_summary() = t.lat.Summary();
    }
    const int64_t wall_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                                std::chrono::steady_clock::now() - wall_start)
                                .count();
    FillInternals(e, wall_ns, &r);
    return r;
  }
};

}  // namespace

std::unique_ptr<Runner> NewEngineRunner() { return std::make_unique<EngineRunner>(); }

}  // namespace blkbench::engine
