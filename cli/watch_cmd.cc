// Watch views and progress modes; see watch_cmd.h.
#include "cli/watch_cmd.h"

#include <unistd.h>

#include <iostream>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "cli/format.h"
#include "common/histogram.h"
#include "common/states.h"
#include "workloads/format.h"

namespace blkbench {
namespace {

// Plain mode prints a summary line at most this often (and at the end).
constexpr absl::Duration kSummaryEvery = absl::Seconds(10);

uint32_t CountRuns(const v1::Experiment& e, bool (*pred)(v1::RunState)) {
  uint32_t n = 0;
  for (const auto& r : e.runs()) n += pred(r.state()) ? 1 : 0;
  return n;
}

double SampleIops(const v1::Sample& s) {
  if (s.interval_ns() == 0) return 0;
  return (s.io().read_ios() + s.io().write_ios()) * 1e9 / s.interval_ns();
}
double SampleBw(const v1::Sample& s) {
  if (s.interval_ns() == 0) return 0;
  return (s.io().read_bytes() + s.io().write_bytes()) * 1e9 / s.interval_ns();
}

int64_t JobMs(const v1::Experiment& e) {
  if (e.cells().empty()) return 0;
  const auto& job = e.cells(0).job();
  return static_cast<int64_t>((job.runtime_ns() + job.ramp_time_ns()) / 1'000'000);
}

std::string SummaryLine(const v1::Experiment& e, EtaEstimator& eta) {
  const uint32_t total = e.runs_size();
  const uint32_t ended = CountRuns(e, IsFinalRunState);
  const uint32_t active = CountRuns(e, IsActiveRunState);
  std::string out =
      absl::StrCat("experiment ", e.id(), " '", e.name(), "'  ", ExperimentStateName(e.state()),
                   "  ", ProgressBar(ended, total, 30), " ", ended, "/", total, " runs");
  if (active > 0) absl::StrAppend(&out, ", ", active, " running");
  const std::string left = eta.Eta(absl::Now(), ended, active, total, JobMs(e));
  if (!left.empty() && !IsEndedExperimentState(e.state())) absl::StrAppend(&out, "  ETA ", left);
  return out;
}

// The live frame: the summary and a row per running run.
std::string LiveView(const v1::Experiment& e, EtaEstimator& eta) {
  std::string out = SummaryLine(e, eta) + "\n";
  const int64_t run_ms = JobMs(e);
  TextTable t({"run", "cell", "rep", "agent", "device", "state", "IOPS", "BW", "p99", "left"});
  bool any = false;
  for (const auto& r : e.runs()) {
    if (!IsActiveRunState(r.state())) continue;
    any = true;
    const v1::Sample& s = r.last_sample();
    std::string left = "-";
    if (run_ms > 0 && r.has_last_sample()) {
      left = FormatDuration(run_ms - static_cast<int64_t>(s.offset_ns() / 1'000'000));
    }
    // This interval's p99, from the sample's histogram delta.
    std::string p99 = "-";
    if (auto h = LatencyHistogram::FromProto(s.lat()); h.ok() && h->count() > 0) {
      p99 = FormatLatency(h->Percentile(99));
    }
    t.AddRow({absl::StrCat(r.id()), workloads::CellLabel(e.cells(r.cell_index())),
              absl::StrCat(r.repeat()), r.agent_id(), r.device_path(), RunStateName(r.state()),
              r.has_last_sample() ? FormatIops(SampleIops(s)) : "-",
              r.has_last_sample() ? FormatBandwidth(SampleBw(s)) : "-", p99, left});
  }
  if (any) out += t.ToString();
  return out;
}

// "run 12 [bs=4k rep 0]: running on host-a /dev/loop0" and the like.
std::string ChangeLine(const v1::Experiment& e, const v1::Run& r) {
  std::string out =
      absl::StrCat("run ", r.id(), " [", workloads::CellLabel(e.cells(r.cell_index())), " rep ",
                   r.repeat(), "]: ", RunStateName(r.state()));
  if (IsActiveRunState(r.state()))
    absl::StrAppend(&out, " on ", r.agent_id(), " ", r.device_path());
  if (r.state() == v1::RUN_DONE && r.has_result()) {
    absl::StrAppend(&out, ", ", FormatIops(r.result().iops()), " IOPS, p99 ",
                    FormatLatency(r.result().lat_summary().p99_ns()));
  }
  if (r.attempt() > 1) absl::StrAppend(&out, " (attempt ", r.attempt(), ")");
  if (!r.error().empty()) absl::StrAppend(&out, ": ", r.error());
  return out;
}

}  // namespace

std::string EtaEstimator::Eta(absl::Time now, uint32_t ended, uint32_t active, uint32_t total,
                              int64_t job_ms) {
  if (ended_at_start_ < 0) ended_at_start_ = ended;
  const uint32_t left = total - std::min(total, ended);
  if (left == 0) return "";
  const int64_t seen = static_cast<int64_t>(ended) - ended_at_start_;
  if (seen > 0) {
    const double per_run_ms = absl::ToDoubleMilliseconds(now - start_) / static_cast<double>(seen);
    return "~" + FormatDuration(static_cast<int64_t>(per_run_ms * left));
  }
  if (job_ms <= 0 || active == 0) return "";
  // Before the first run ends: the configured time, as many at once as run now, less
  // what the watch has already waited.
  const int64_t waves = (left + active - 1) / active;
  const int64_t waited = absl::ToInt64Milliseconds(now - start_);
  return "~" + FormatDuration(std::max<int64_t>(job_ms, waves * job_ms - waited));
}

int WatchExperiment(Client& c, uint64_t id, const std::string& progress, std::ostream& out,
                    std::ostream& err) {
  grpc::ClientContext ctx;
  v1::WatchExperimentRequest req;
  req.set_id(id);
  auto reader = c.stub().WatchExperiment(&ctx, req);
  const bool tty = &out == &std::cout && isatty(STDOUT_FILENO);
  const std::string mode = progress == "auto" ? (tty ? "live" : "plain") : progress;
  EtaEstimator eta(absl::Now());
  v1::WatchEvent ev;
  std::string last_frame;
  std::map<uint64_t, std::pair<v1::RunState, uint32_t>> seen;  // run -> (state, attempt)
  absl::Time last_summary = absl::InfinitePast();
  v1::Experiment e;
  while (reader->Read(&ev)) {
    e = ev.experiment();
    if (mode == "live") {
      std::string frame = LiveView(e, eta);
      if (frame == last_frame) continue;
      if (tty) out << "\033[H\033[2J";
      out << frame << std::flush;
      last_frame = frame;
    } else if (mode == "plain") {
      for (const v1::Run& r : e.runs()) {
        auto [it, inserted] = seen.try_emplace(r.id(), r.state(), r.attempt());
        const bool changed =
            !inserted && (it->second.first != r.state() || it->second.second != r.attempt());
        // The first event shows what already happened, except runs still queued.
        if ((inserted && r.state() != v1::RUN_QUEUED) || changed) {
          out << ChangeLine(e, r) << "\n";
        }
        it->second = {r.state(), r.attempt()};
      }
      if (absl::Now() - last_summary >= kSummaryEvery || IsEndedExperimentState(e.state())) {
        out << SummaryLine(e, eta) << "\n" << std::flush;
        last_summary = absl::Now();
      }
    }
  }
  grpc::Status s = reader->Finish();
  if (!s.ok()) return c.Fail(s);
  if (mode != "live" && e.state() != v1::EXPERIMENT_DONE && !e.error().empty()) {
    err << "blkbench: experiment " << id << " " << ExperimentStateName(e.state()) << ": "
        << e.error() << "\n";
  }
  return e.state() == v1::EXPERIMENT_DONE ? 0 : 1;
}

}  // namespace blkbench
