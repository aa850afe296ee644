// fio's windowed log files from per-job interval samples (fio_logs.h). The formats are
// fio 3.33's iolog.c flush_samples (time, value, ddir, bs[, offset], prio) and
// flush_hist_samples (time, ddir, bs, one count per bucket); the values are those of
// stat.c __add_stat_to_log: the window's mean, rounded, one row per direction with I/O.
#include "cli/fio_logs.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string_view>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "cli/fio_json.h"
#include "common/cell_label.h"
#include "common/histogram.h"
#include "common/log_options.h"
#include "common/resolved_job.h"

namespace blkbench {
namespace {

using H = LatencyHistogram;
using Buckets = std::array<uint64_t, H::kBuckets>;

constexpr uint32_t kRead = 0, kWrite = 1;  // fio's DDIR_READ, DDIR_WRITE

// One job's share of one sample (Sample.jobs).
struct Interval {
  uint64_t end_ms = 0;  // fio's log time: ms since the measured phase began
  uint64_t interval_ns = 0;
  uint64_t ios[2] = {0, 0};
  uint64_t bytes[2] = {0, 0};
  const v1::Histogram* lat[2] = {nullptr, nullptr};
};

// A windowed row, as flush_samples prints it: block size and offset are 0 in windowed
// logs, and so is the priority (__add_stat_to_log passes none).
void Row(std::string& out, uint64_t time_ms, uint64_t value, uint32_t ddir, bool log_offset) {
  absl::StrAppend(&out, time_ms, ", ", value, ", ", ddir, ", 0, ");
  if (log_offset) absl::StrAppend(&out, "0, ");
  absl::StrAppend(&out, "0\n");
}

// The window's mean rounded as __add_stat_to_log rounds it (mean + 0.5, truncated).
uint64_t Rounded(double mean) { return static_cast<uint64_t>(std::floor(mean + 0.5)); }

// bw (KiB/s) or iops rows: one per interval and direction that did I/O.
std::string RateLog(const std::vector<Interval>& intervals, bool bw, bool log_offset) {
  std::string out;
  for (const Interval& iv : intervals) {
    const double secs = static_cast<double>(iv.interval_ns) / 1e9;
    if (secs <= 0) continue;
    for (uint32_t d : {kRead, kWrite}) {
      if (iv.ios[d] == 0) continue;
      const double v = bw ? static_cast<double>(iv.bytes[d]) / 1024 / secs
                          : static_cast<double>(iv.ios[d]) / secs;
      Row(out, iv.end_ms, Rounded(v), d, log_offset);
    }
  }
  return out;
}

// Mean completion latency (ns) per interval and direction.
std::string LatencyLog(const std::vector<Interval>& intervals, bool log_offset) {
  std::string out;
  for (const Interval& iv : intervals) {
    for (uint32_t d : {kRead, kWrite}) {
      const v1::Histogram* h = iv.lat[d];
      if (h == nullptr || h->count() == 0) continue;
      Row(out, iv.end_ms, Rounded(h->sum_ns() / static_cast<double>(h->count())), d, log_offset);
    }
  }
  return out;
}

// Every `per_entry` intervals summed into one row per direction, as fio logs a copy of
// the clat histogram's growth every log_hist_msec; an unfinished last window is not
// logged (fio logs one only when an I/O completes after it ended).
std::string HistLog(const std::vector<Interval>& intervals, uint32_t per_entry, uint64_t bs) {
  std::string out;
  Buckets sum[2] = {};
  bool any[2] = {false, false};
  uint32_t in_window = 0;
  for (const Interval& iv : intervals) {
    for (uint32_t d : {kRead, kWrite}) {
      const v1::Histogram* h = iv.lat[d];
      if (h == nullptr) continue;
      for (int i = 0; i < h->bucket_index_size() && i < h->bucket_count_size(); ++i) {
        if (h->bucket_index(i) >= H::kBuckets) continue;
        sum[d][h->bucket_index(i)] += h->bucket_count(i);
        any[d] = true;
      }
    }
    if (++in_window < per_entry) continue;
    for (uint32_t d : {kRead, kWrite}) {
      if (!any[d]) continue;
      absl::StrAppend(&out, iv.end_ms, ", ", d, ", ", bs);
      for (uint64_t n : sum[d]) absl::StrAppend(&out, ", ", n);
      out += "\n";
      sum[d].fill(0);
      any[d] = false;
    }
    in_window = 0;
  }
  return out;
}

// Job `k`'s intervals of `row`; false when a sample has no entry for it.
bool JobIntervals(const v1::ResultRow& row, uint32_t k, std::vector<Interval>& out) {
  for (const v1::Sample& s : row.samples()) {
    const v1::JobInterval* mine = nullptr;
    for (const v1::JobInterval& ji : s.jobs()) {
      if (ji.index() == k) mine = &ji;
    }
    if (mine == nullptr) return false;
    Interval iv;
    iv.end_ms = s.offset_ns() / 1'000'000;
    iv.interval_ns = s.interval_ns();
    iv.ios[kRead] = mine->io().read_ios();
    iv.ios[kWrite] = mine->io().write_ios();
    iv.bytes[kRead] = mine->io().read_bytes();
    iv.bytes[kWrite] = mine->io().write_bytes();
    iv.lat[kRead] = &mine->read_lat();
    iv.lat[kWrite] = &mine->write_lat();
    out.push_back(iv);
  }
  return !row.samples().empty();
}

// The files of job `k` (fio's job number k + 1) of one run.
void JobLogs(const std::string& dir, const std::string& job_name, uint32_t k,
             const v1::JobSpec& spec, const std::vector<Interval>& intervals,
             std::vector<FioLogFile>& out) {
  auto name = [&](const std::string& prefix, const char* type) {
    return absl::StrCat(dir, "/", prefix.empty() ? job_name : prefix, "_", type, ".", k + 1,
                        ".log");
  };
  const bool offset = spec.log_offset();
  if (spec.has_write_bw_log()) {
    out.push_back({name(spec.write_bw_log(), "bw"), RateLog(intervals, true, offset)});
  }
  if (spec.has_write_iops_log()) {
    out.push_back({name(spec.write_iops_log(), "iops"), RateLog(intervals, false, offset)});
  }
  if (spec.has_write_lat_log()) {
    // Synchronous engines only (CheckLogOptions): fio's slat log stays empty and its clat
    // and lat logs hold the same time, submission to completion.
    const std::string lat = LatencyLog(intervals, offset);
    out.push_back({name(spec.write_lat_log(), "slat"), ""});
    out.push_back({name(spec.write_lat_log(), "clat"), lat});
    out.push_back({name(spec.write_lat_log(), "lat"), lat});
  }
  if (spec.has_write_hist_log() && spec.log_hist_msec() != 0) {
    const uint32_t sample_ms = LogSampleIntervalMs(spec);
    const uint32_t per_entry =
        sample_ms ? std::max<uint32_t>(1, spec.log_hist_msec() / sample_ms) : 1;
    const absl::StatusOr<ResolvedJob> resolved = ResolveJobOrError(spec);
    const uint64_t bs = resolved.ok() ? resolved->bs : spec.bs();
    out.push_back({name(spec.write_hist_log(), "clat_hist"), HistLog(intervals, per_entry, bs)});
  }
}

}  // namespace

FioLogs FioLogFiles(const v1::GetResultsResponse& resp) {
  FioLogs logs;
  for (const v1::ResultRow& row : resp.rows()) {
    const v1::CellSpec& cell = row.cell();
    const v1::Run& run = row.run();
    if (run.state() != v1::RUN_DONE) continue;
    // The cell's jobs: its named jobs, or its one job.
    std::vector<std::pair<std::string, const v1::JobSpec*>> jobs;
    for (const v1::NamedJob& nj : cell.jobs()) jobs.emplace_back(nj.name(), &nj.job());
    if (jobs.empty()) jobs.emplace_back("job", &cell.job());
    bool wanted = false;
    for (const auto& [unused, spec] : jobs) wanted |= WantsLogs(*spec);
    if (!wanted) continue;
    const std::string label = cell.axes().empty() ? "cell" : SafeName(CellLabel(cell));
    const std::string dir = absl::StrCat(label, "_rep", run.repeat());
    for (uint32_t k = 0; k < jobs.size(); ++k) {
      const auto& [job_name, spec] = jobs[k];
      if (!WantsLogs(*spec)) continue;
      if (LogSampleIntervalMs(*spec) != LogSampleIntervalMs(cell.job())) {
        logs.skipped.push_back(absl::StrCat(
            "run ", run.id(), " job '", job_name, "': its log_avg_msec/log_hist_msec differ from ",
            "the cell's first job's, whose interval the run's samples have"));
        continue;
      }
      std::vector<Interval> intervals;
      if (!JobIntervals(row, k, intervals)) {
        logs.skipped.push_back(absl::StrCat("run ", run.id(), " (", CellLabel(cell),
                                            "): no per-job samples (an agent or ",
                                            "store from before Sample.jobs), so no logs"));
        break;
      }
      JobLogs(dir, job_name, k, *spec, intervals, logs.files);
    }
  }
  return logs;
}

absl::Status WriteFioLogs(const v1::GetResultsResponse& resp, const std::string& dir,
                          std::vector<std::string>* skipped) {
  FioLogs logs = FioLogFiles(resp);
  if (skipped != nullptr) {
    skipped->insert(skipped->end(), logs.skipped.begin(), logs.skipped.end());
  }
  for (const FioLogFile& f : logs.files) {
    const std::filesystem::path path = std::filesystem::path(dir) / f.name;
    std::error_code ec;
    std::filesystem::create_directories(path.parent_path(), ec);
    if (ec) {
      return absl::InternalError(
          absl::StrCat("cannot create ", path.parent_path().string(), ": ", ec.message()));
    }
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << f.text;
    out.close();
    if (!out) return absl::InternalError(absl::StrCat("cannot write ", path.string()));
  }
  return absl::OkStatus();
}

int WriteFioLogsFlag(const v1::GetResultsResponse& resp, const std::string& dir,
                     const std::string& who, std::ostream& err) {
  std::vector<std::string> skipped;
  const absl::Status s = WriteFioLogs(resp, dir, &skipped);
  for (const std::string& why : skipped) err << who << ": --logs: " << why << "\n";
  if (!s.ok()) {
    err << who << ": --logs: " << s.message() << "\n";
    return 1;
  }
  return 0;
}

}  // namespace blkbench
