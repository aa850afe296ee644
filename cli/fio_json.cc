// Results as fio 3.33's --output-format=json / json+ (stat.c show_thread_status_json,
// add_ddir_status_json, json_add_job_opts, show_disk_util json). Where each value comes
// from, and which are approximations, is in docs/fio-json.md.
#include "cli/fio_json.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/cell_label.h"
#include "common/histogram.h"
#include "common/iosched_tunables.h"
#include "common/resolved_job.h"
#include "common/units.h"

namespace blkbench {
namespace {

// fio's default percentile_list (options.c).
constexpr double kPercentiles[] = {1,  5,  10, 20, 30,   40,   50,    60,   70,
                                   80, 90, 95, 99, 99.5, 99.9, 99.95, 99.99};

// A pretty-printed JSON writer that keeps members in the order written and integers
// apart from floats (fio prints floats with %f), as fio's json.c does.
class Json {
 public:
  Json& Open(std::string_view key = {}) { return Begin(key, '{'); }
  Json& OpenArray(std::string_view key = {}) { return Begin(key, '['); }
  Json& Close() {
    const char open = stack_.back().open;
    const bool empty = stack_.back().first;
    stack_.pop_back();
    if (!empty) NewLine();
    out_ += open == '{' ? '}' : ']';
    return *this;
  }
  Json& Int(std::string_view key, int64_t v) { return Raw(key, absl::StrCat(v)); }
  Json& UInt(std::string_view key, uint64_t v) { return Raw(key, absl::StrCat(v)); }
  Json& Float(std::string_view key, double v) {
    char buf[64];
    snprintf(buf, sizeof(buf), "%f", std::isfinite(v) ? v : 0.0);
    return Raw(key, buf);
  }
  Json& Str(std::string_view key, std::string_view v) { return Raw(key, Quote(v)); }
  std::string Take() {
    out_ += '\n';
    return std::move(out_);
  }

 private:
  struct Level {
    char open;
    bool first = true;
  };
  static std::string Quote(std::string_view s) {
    std::string q = "\"";
    for (char c : s) {
      if (c == '"' || c == '\\') {
        q += '\\';
        q += c;
      } else if (static_cast<unsigned char>(c) < 0x20) {
        char buf[8];
        snprintf(buf, sizeof(buf), "\\u%04x", c);
        q += buf;
      } else {
        q += c;
      }
    }
    return q + "\"";
  }
  void NewLine() { out_ += '\n' + std::string(2 * stack_.size(), ' '); }
  void Member(std::string_view key) {
    if (stack_.empty()) return;
    if (!stack_.back().first) out_ += ',';
    stack_.back().first = false;
    NewLine();
    if (stack_.back().open == '{') absl::StrAppend(&out_, Quote(key), " : ");
  }
  Json& Begin(std::string_view key, char open) {
    Member(key);
    out_ += open;
    stack_.push_back({open});
    return *this;
  }
  Json& Raw(std::string_view key, std::string_view text) {
    Member(key);
    out_ += text;
    return *this;
  }
  std::string out_;
  std::vector<Level> stack_;
};

// Statistics of a series the way fio's stat.c computes them (calc_lat: the sample
// standard deviation, n - 1).
struct Series {
  double min = 0, max = 0, mean = 0, stddev = 0;
  uint64_t n = 0;
};
Series Stats(const std::vector<double>& v) {
  Series s;
  s.n = v.size();
  if (v.empty()) return s;
  s.min = *std::min_element(v.begin(), v.end());
  s.max = *std::max_element(v.begin(), v.end());
  double sum = 0;
  for (double x : v) sum += x;
  s.mean = sum / static_cast<double>(v.size());
  if (v.size() > 1) {
    double sq = 0;
    for (double x : v) sq += (x - s.mean) * (x - s.mean);
    s.stddev = std::sqrt(sq / static_cast<double>(v.size() - 1));
  }
  return s;
}

// One direction (read, write) of one fio job: what its runs did, merged.
struct Direction {
  uint64_t ios = 0, bytes = 0;
  LatencyHistogram lat;
  std::vector<double> bw_kib, iops;  // per stored interval sample
  // A named job whose runs lack per-job samples (Sample.jobs, from agents and engines
  // before it existed): its bw_*/iops_* statistics are absent, not zero.
  bool intervals_missing = false;
};

// One fio job: a run, or a cell's finished runs merged.
struct Job {
  std::string name;
  uint32_t groupid = 0;
  const v1::CellSpec* cell = nullptr;
  const v1::JobSpec* spec = nullptr;  // the options it ran: the cell's job or a named job's
  int named = -1;  // index into cell->jobs() and RunResult.jobs; -1 = the run's total
  const v1::RunResult* first = nullptr;  // facts (host, device, settings) of the first run
  std::vector<uint64_t> runs, failed;
  int error = 0;  // fio's errno-style job error: EIO when runs failed, else ECANCELED
  bool any_failed = false;
  uint64_t runtime_ns = 0, usr_ns = 0, sys_ns = 0;
  uint64_t syncs = 0;  // fsync=N / end_fsync calls (the executor's executor.fsyncs)
  int64_t finished_ms = 0;
  Direction read, write;
  std::map<std::string, v1::DeviceStats> disks;  // by kernel name, summed
};

// One interval's rates, as fio's add_bw_sample/add_iops_sample record them (KiB/s, IO/s).
void AddInterval(const v1::IoCounters& io, uint64_t interval_ns, Job& job) {
  const double secs = static_cast<double>(interval_ns) / 1e9;
  if (secs <= 0) return;
  job.read.bw_kib.push_back(static_cast<double>(io.read_bytes()) / 1024 / secs);
  job.read.iops.push_back(static_cast<double>(io.read_ios()) / secs);
  job.write.bw_kib.push_back(static_cast<double>(io.write_bytes()) / 1024 / secs);
  job.write.iops.push_back(static_cast<double>(io.write_ios()) / secs);
}

void AddSamples(const v1::ResultRow& row, Job& job) {
  for (const v1::Sample& s : row.samples()) AddInterval(s.io(), s.interval_ns(), job);
}

// Named job `k`'s share of each sample (Sample.jobs); marks the job's intervals missing
// when the run has no samples or a sample has no entry for it.
void AddJobSamples(const v1::ResultRow& row, int k, Job& job) {
  if (row.samples().empty()) job.read.intervals_missing = job.write.intervals_missing = true;
  for (const v1::Sample& s : row.samples()) {
    const v1::JobInterval* mine = nullptr;
    for (const v1::JobInterval& ji : s.jobs()) {
      if (ji.index() == static_cast<uint32_t>(k)) mine = &ji;
    }
    if (mine == nullptr) {
      job.read.intervals_missing = job.write.intervals_missing = true;
      return;
    }
    AddInterval(mine->io(), s.interval_ns(), job);
  }
}

void AddDisk(const v1::RunResult& r, Job& job) {
  const v1::DeviceStats& d = r.device_stats();
  if (d.elapsed_s() <= 0 || r.device().kernel_name().empty()) return;
  v1::DeviceStats& sum = job.disks[r.device().kernel_name()];
  sum.set_elapsed_s(sum.elapsed_s() + d.elapsed_s());
  sum.set_reads(sum.reads() + d.reads());
  sum.set_writes(sum.writes() + d.writes());
  sum.set_reads_merged(sum.reads_merged() + d.reads_merged());
  sum.set_writes_merged(sum.writes_merged() + d.writes_merged());
  // Summed as ticks (ms): await * ios, aqu-sz * elapsed, util * elapsed.
  sum.set_r_await_ms(sum.r_await_ms() + d.r_await_ms() * static_cast<double>(d.reads()));
  sum.set_w_await_ms(sum.w_await_ms() + d.w_await_ms() * static_cast<double>(d.writes()));
  sum.set_aqu_sz(sum.aqu_sz() + d.aqu_sz() * d.elapsed_s() * 1000);
  sum.set_util_pct(sum.util_pct() + d.util_pct() * d.elapsed_s());
}

void AddRun(const v1::ResultRow& row, Job& job) {
  const v1::Run& run = row.run();
  job.runs.push_back(run.id());
  job.finished_ms = std::max(job.finished_ms, run.finished_unix_ms());
  if (run.state() != v1::RUN_DONE) {
    job.failed.push_back(run.id());
    job.any_failed |= run.state() == v1::RUN_FAILED;
    return;
  }
  const v1::RunResult& r = run.result();
  if (job.first == nullptr) job.first = &r;
  if (job.named >= 0) {
    // One named job of the run: its own I/O and latencies; the run's time and CPU (not
    // measured per job), its samples and disk only once, with the cell's first job.
    const int k = job.named;
    job.runtime_ns += r.duration_ns();
    if (k >= r.jobs_size()) return;
    const v1::JobResult& jr = r.jobs(k);
    job.read.ios += jr.io().read_ios();
    job.read.bytes += jr.io().read_bytes();
    job.write.ios += jr.io().write_ios();
    job.write.bytes += jr.io().write_bytes();
    if (auto h = LatencyHistogram::FromProto(jr.read_lat()); h.ok()) job.read.lat.Merge(*h);
    if (auto h = LatencyHistogram::FromProto(jr.write_lat()); h.ok()) job.write.lat.Merge(*h);
    AddJobSamples(row, k, job);
    if (k == 0) {
      job.usr_ns += r.usr_cpu_ns();
      job.sys_ns += r.sys_cpu_ns();
      AddDisk(r, job);
    }
    return;
  }
  job.runtime_ns += r.duration_ns();
  job.usr_ns += r.usr_cpu_ns();
  job.sys_ns += r.sys_cpu_ns();
  if (auto it = r.internals().find("executor.fsyncs"); it != r.internals().end()) {
    job.syncs += static_cast<uint64_t>(it->second);
  }
  job.read.ios += r.io().read_ios();
  job.read.bytes += r.io().read_bytes();
  job.write.ios += r.io().write_ios();
  job.write.bytes += r.io().write_bytes();
  if (auto h = LatencyHistogram::FromProto(r.read_lat()); h.ok()) job.read.lat.Merge(*h);
  if (auto h = LatencyHistogram::FromProto(r.write_lat()); h.ok()) job.write.lat.Merge(*h);
  AddSamples(row, job);
  AddDisk(r, job);
}

// A job none of whose runs finished: fio's job error is an errno.
void Finish(Job& job) {
  if (job.first == nullptr && !job.runs.empty()) job.error = job.any_failed ? 5 : 125;
}

std::vector<Job> Jobs(const v1::GetResultsResponse& resp, const FioJsonOptions& o) {
  std::vector<Job> jobs;
  std::map<uint32_t, size_t> by_cell;
  std::map<uint64_t, size_t> by_named;
  for (const v1::ResultRow& row : resp.rows()) {
    const v1::Run& run = row.run();
    const bool final = run.state() == v1::RUN_DONE || run.state() == v1::RUN_FAILED ||
                       run.state() == v1::RUN_CANCELED;
    if (!final) continue;  // still queued or running: nothing to report yet
    const int named = o.group_reporting ? 0 : row.cell().jobs_size();
    for (int k = 0; k < named; ++k) {
      const std::string& section = row.cell().jobs(k).name();
      Job* job;
      if (o.per == FioJsonOptions::Per::kCell) {
        // Cell indexes are below 2^32: one key per (cell, named job).
        const uint64_t key = (uint64_t{run.cell_index()} << 16) | static_cast<uint64_t>(k);
        auto [it, fresh] = by_named.emplace(key, jobs.size());
        if (fresh) jobs.emplace_back();
        job = &jobs[it->second];
        if (fresh) job->name = section;
      } else {
        jobs.emplace_back();
        job = &jobs.back();
        job->name = absl::StrCat(section, " rep", run.repeat());
      }
      job->groupid =
          o.per == FioJsonOptions::Per::kCell ? run.cell_index() : static_cast<uint32_t>(run.id());
      job->cell = &row.cell();
      job->spec = &row.cell().jobs(k).job();
      job->named = k;
      AddRun(row, *job);
    }
    if (named > 0) continue;
    Job* job;
    if (o.per == FioJsonOptions::Per::kCell) {
      auto [it, fresh] = by_cell.emplace(run.cell_index(), jobs.size());
      if (fresh) {
        jobs.emplace_back();
        jobs.back().name = CellLabel(row.cell());
        jobs.back().groupid = run.cell_index();
        jobs.back().cell = &row.cell();
      }
      job = &jobs[it->second];
    } else {
      jobs.emplace_back();
      job = &jobs.back();
      job->name = absl::StrCat(CellLabel(row.cell()), " rep", run.repeat());
      job->groupid = static_cast<uint32_t>(run.id());
      job->cell = &row.cell();
    }
    job->spec = &row.cell().job();
    AddRun(row, *job);
  }
  for (Job& job : jobs) Finish(job);
  return jobs;
}

void LatencyStats(Json& j, std::string_view key, const LatencyHistogram& h, bool percentiles,
                  bool bins) {
  j.Open(key);
  j.UInt("min", h.min_ns()).UInt("max", h.max_ns()).Float("mean", h.mean_ns());
  // The standard deviation from the buckets (their representative values around the
  // exact mean): the histogram keeps no sum of squares.
  v1::Histogram p;
  h.ToProto(&p);
  double sq = 0;
  for (int i = 0; i < p.bucket_index_size(); ++i) {
    const double d =
        static_cast<double>(LatencyHistogram::BucketValue(p.bucket_index(i))) - h.mean_ns();
    sq += d * d * static_cast<double>(p.bucket_count(i));
  }
  j.Float("stddev", h.count() > 1 ? std::sqrt(sq / static_cast<double>(h.count() - 1)) : 0.0);
  j.UInt("N", h.count());
  if (percentiles && h.count() > 0) {
    j.Open("percentile");
    for (double pct : kPercentiles) {
      char name[32];
      snprintf(name, sizeof(name), "%f", pct);
      j.UInt(name, h.Percentile(pct));
    }
    j.Close();
    if (bins) {
      j.Open("bins");
      for (int i = 0; i < p.bucket_index_size(); ++i) {
        j.UInt(absl::StrCat(LatencyHistogram::BucketValue(p.bucket_index(i))), p.bucket_count(i));
      }
      j.Close();
    }
  }
  j.Close();
}

void EmptyLatency(Json& j, std::string_view key) {
  j.Open(key).UInt("min", 0).UInt("max", 0).Float("mean", 0).Float("stddev", 0).UInt("N", 0);
  j.Close();
}

void WriteDirection(Json& j, std::string_view key, const Direction& d, uint64_t runtime_ns,
                    uint64_t total_bytes, bool plus) {
  const double secs = static_cast<double>(runtime_ns) / 1e9;
  const uint64_t bw_bytes = secs > 0 ? static_cast<uint64_t>(d.bytes / secs) : 0;
  j.Open(key);
  j.UInt("io_bytes", d.bytes).UInt("io_kbytes", d.bytes / 1024);
  j.UInt("bw_bytes", bw_bytes).UInt("bw", bw_bytes / 1024);
  j.Float("iops", secs > 0 ? static_cast<double>(d.ios) / secs : 0);
  j.UInt("runtime", d.ios ? runtime_ns / 1'000'000 : 0);
  j.UInt("total_ios", d.ios).UInt("short_ios", 0).UInt("drop_ios", 0);
  EmptyLatency(j, "slat_ns");
  LatencyStats(j, "clat_ns", d.lat, /*percentiles=*/true, plus);
  LatencyStats(j, "lat_ns", d.lat, /*percentiles=*/false, false);
  if (d.intervals_missing) {  // docs/fio-json.md: absent, never a 0 that looks like data
    j.Close();
    return;
  }
  const bool sampled = d.ios > 0;
  const Series bw = Stats(sampled ? d.bw_kib : std::vector<double>{});
  const Series iops = Stats(sampled ? d.iops : std::vector<double>{});
  j.UInt("bw_min", static_cast<uint64_t>(bw.min)).UInt("bw_max", static_cast<uint64_t>(bw.max));
  j.Float("bw_agg", total_bytes > 0
                        ? 100.0 * static_cast<double>(d.bytes) / static_cast<double>(total_bytes)
                        : 0.0);
  j.Float("bw_mean", bw.mean).Float("bw_dev", bw.stddev).UInt("bw_samples", bw.n);
  j.UInt("iops_min", static_cast<uint64_t>(iops.min));
  j.UInt("iops_max", static_cast<uint64_t>(iops.max));
  j.Float("iops_mean", iops.mean).Float("iops_stddev", iops.stddev).UInt("iops_samples", iops.n);
  j.Close();
}

// fio's io_u_lat_n/_u/_m: the share of completions per latency range, each range's key
// its upper bound (exclusive); a completion below 1 µs counts in ns, below 1 ms in µs.
void LatencyRanges(Json& j, const Job& job) {
  static constexpr uint64_t kBounds[] = {2, 4, 10, 20, 50, 100, 250, 500, 750, 1000};
  static constexpr uint64_t kMsBounds[] = {2, 4, 10, 20, 50, 100, 250, 500, 750, 1000, 2000};
  double ns[10] = {}, us[10] = {}, ms[12] = {};
  uint64_t total = 0;
  for (const Direction* d : {&job.read, &job.write}) {
    v1::Histogram p;
    d->lat.ToProto(&p);
    for (int i = 0; i < p.bucket_index_size(); ++i) {
      const uint64_t v = LatencyHistogram::BucketValue(p.bucket_index(i));
      const double c = static_cast<double>(p.bucket_count(i));
      total += p.bucket_count(i);
      if (v < 1000) {
        ns[std::upper_bound(std::begin(kBounds), std::end(kBounds), v) - std::begin(kBounds)] += c;
      } else if (v < 1'000'000) {
        us[std::upper_bound(std::begin(kBounds), std::end(kBounds), v / 1000) -
           std::begin(kBounds)] += c;
      } else {
        ms[std::upper_bound(std::begin(kMsBounds), std::end(kMsBounds), v / 1'000'000) -
           std::begin(kMsBounds)] += c;
      }
    }
  }
  const double scale = total ? 100.0 / static_cast<double>(total) : 0.0;
  j.Open("latency_ns");
  for (size_t i = 0; i < 10; ++i) j.Float(absl::StrCat(kBounds[i]), ns[i] * scale);
  j.Close().Open("latency_us");
  for (size_t i = 0; i < 10; ++i) j.Float(absl::StrCat(kBounds[i]), us[i] * scale);
  j.Close().Open("latency_ms");
  for (size_t i = 0; i < 11; ++i) j.Float(absl::StrCat(kMsBounds[i]), ms[i] * scale);
  j.Float(">=2000", ms[11] * scale).Close();
}

// fio's iodepth_level (io_u_mark_depth) and iodepth_submit/_complete (io_u_mark_submit /
// _complete): the executor keeps no per-I/O depth, so all of it is put at the configured
// depth and batch sizes, which is what a job that keeps its queue full reports.
void Depths(Json& j, const ResolvedJob& r) {
  static constexpr const char* kLevels[] = {"1", "2", "4", "8", "16", "32", ">=64"};
  const uint32_t depth = r.iodepth;
  const size_t level = depth >= 64   ? 6
                       : depth >= 32 ? 5
                       : depth >= 16 ? 4
                       : depth >= 8  ? 3
                       : depth >= 4  ? 2
                       : depth >= 2  ? 1
                                     : 0;
  j.Open("iodepth_level");
  for (size_t i = 0; i < 7; ++i) j.Float(kLevels[i], i == level ? 100.0 : 0.0);
  j.Close();
  static constexpr const char* kBatches[] = {"0", "4", "8", "16", "32", "64", ">=64"};
  auto batch_bucket = [](uint32_t n) -> size_t {
    return n == 0 ? 0 : n <= 4 ? 1 : n <= 8 ? 2 : n <= 16 ? 3 : n <= 32 ? 4 : n <= 64 ? 5 : 6;
  };
  for (const auto& [key, n] : {std::pair<const char*, uint32_t>{"iodepth_submit", r.batch_submit},
                               {"iodepth_complete", std::max(1u, r.complete_min)}}) {
    j.Open(key);
    for (size_t i = 0; i < 7; ++i) j.Float(kBatches[i], i == batch_bucket(n) ? 100.0 : 0.0);
    j.Close();
  }
}

// fio's R[,W] per-direction form: "1m" for both, "1m,500k", ",500k" or "1m,".
std::string PerDirection(const uint64_t v[2], bool sizes) {
  auto one = [&](uint64_t x) -> std::string {
    if (x == 0) return "";
    return sizes ? FormatSize(x) : absl::StrCat(x);
  };
  if (v[0] == v[1]) return one(v[0]);
  return absl::StrCat(one(v[0]), ",", one(v[1]));
}

// The options of real job files (issue 14), as a job file would write them.
void FioJobFileOptions(Json& j, const v1::JobSpec& s, const ResolvedJob& r) {
  if (s.norandommap()) j.Str("norandommap", "1");
  if (s.has_randrepeat()) j.Str("randrepeat", s.randrepeat() ? "1" : "0");
  if (!s.random_distribution().empty()) j.Str("random_distribution", s.random_distribution());
  if (!s.file_service_type().empty()) j.Str("file_service_type", s.file_service_type());
  // fio's own spelling: one set for every direction, or reads',writes' when they differ.
  auto split = [](const BlockSizes& d) {
    std::string text;
    for (const BsShare& e : d.split) {
      absl::StrAppend(&text, text.empty() ? "" : ":", FormatSize(e.bs), "/", e.percent);
    }
    return text.empty() ? absl::StrCat(FormatSize(d.min), "/100") : text;
  };
  auto range = [](const BlockSizes& d) {
    return absl::StrCat(FormatSize(d.min), "-", FormatSize(d.max));
  };
  const BlockSizes& rd = r.sizes[0];
  const BlockSizes& wr = r.sizes[1];
  const bool apart = r.per_direction_bs();
  if (!rd.split.empty() || !wr.split.empty()) {
    j.Str("bssplit", apart ? absl::StrCat(split(rd), ",", split(wr)) : split(rd));
  } else if (rd.variable() || wr.variable()) {
    j.Str("bsrange", apart ? absl::StrCat(range(rd), ",", range(wr)) : range(rd));
  }
  if (rd.align != rd.min || wr.align != wr.min) {
    j.Str("ba", rd.align == wr.align
                    ? FormatSize(rd.align)
                    : absl::StrCat(FormatSize(rd.align), ",", FormatSize(wr.align)));
  }
  if (r.rate_bps[0] | r.rate_bps[1]) j.Str("rate", PerDirection(r.rate_bps, true));
  if (r.rate_iops[0] | r.rate_iops[1]) j.Str("rate_iops", PerDirection(r.rate_iops, false));
  if (!s.rate_process().empty()) j.Str("rate_process", s.rate_process());
  if (r.startdelay_ns) j.Str("startdelay", FormatDurationNs(r.startdelay_ns));
  if (r.thinktime_ns) {
    j.Str("thinktime", FormatDurationNs(r.thinktime_ns));
    if (r.thinktime_spin_ns) {
      j.Str("thinktime_spin", FormatDurationNs(r.thinktime_spin_ns));
    }
    if (r.thinktime_blocks != 1) j.Str("thinktime_blocks", absl::StrCat(r.thinktime_blocks));
  }
  if (r.nice) j.Str("nice", absl::StrCat(r.nice));
  if (s.has_prio()) j.Str("prio", absl::StrCat(s.prio()));
  if (s.prioclass()) j.Str("prioclass", absl::StrCat(s.prioclass()));
  if (r.fsync_blocks) j.Str("fsync", absl::StrCat(r.fsync_blocks));
  if (r.end_fsync) j.Str("end_fsync", "1");
  if (r.log_avg_msec) j.Str("log_avg_msec", absl::StrCat(r.log_avg_msec));
}

// "job options" as fio spells them (strings, sizes as "4k"): what the cell set.
void JobOptions(Json& j, const Job& job, const ResolvedJob& r) {
  const v1::JobSpec& s = *job.spec;
  j.Open("job options");
  j.Str("name", job.name);
  if (job.first != nullptr && !job.first->device().path().empty()) {
    j.Str("filename", job.first->device().path());
  }
  j.Str("rw", FioRwName(s.rw() == v1::RW_MODE_UNSPECIFIED ? v1::READ : s.rw()));
  if (!r.random || r.read_percent % 100 != 0) {
    if (r.reads && r.writes) j.Str("rwmixread", absl::StrCat(r.read_percent));
  }
  j.Str("bs", r.per_direction_bs()
                  ? absl::StrCat(FormatSize(r.sizes[0].min), ",", FormatSize(r.sizes[1].min))
                  : FormatSize(r.bs));
  j.Str("ioengine", std::string(r.engine_name));
  j.Str("iodepth", absl::StrCat(s.iodepth() ? s.iodepth() : 1));
  if (s.iodepth_batch_submit()) j.Str("iodepth_batch_submit", absl::StrCat(r.batch_submit));
  if (s.iodepth_batch_complete_min() != 1) {
    j.Str("iodepth_batch_complete_min", absl::StrCat(r.complete_min));
  }
  if (s.iodepth_batch_complete_max()) {
    j.Str("iodepth_batch_complete_max", absl::StrCat(r.complete_max));
  }
  j.Str("numjobs", absl::StrCat(r.numjobs));
  j.Str("direct", r.direct ? "1" : "0");
  if (r.size) j.Str("size", FormatSize(r.size));
  if (r.offset) j.Str("offset", FormatSize(r.offset));
  if (r.offset_increment) j.Str("offset_increment", FormatSize(r.offset_increment));
  if (r.io_size) j.Str("io_size", FormatSize(r.io_size));
  if (r.runtime_ns) j.Str("runtime", FormatDurationNs(r.runtime_ns));
  if (r.ramp_ns) j.Str("ramp_time", FormatDurationNs(r.ramp_ns));
  if (r.time_based) j.Str("time_based", "1");
  for (const auto& [name, on] : {std::pair<const char*, bool>{"hipri", r.hipri},
                                 {"fixedbufs", r.fixedbufs},
                                 {"registerfiles", r.registerfiles},
                                 {"sqthread_poll", r.sqthread_poll},
                                 {"thread", r.thread}}) {
    if (on) j.Str(name, "1");
  }
  if (!r.cpus_allowed.empty()) j.Str("cpus_allowed", r.cpus_allowed);
  if (s.randseed()) j.Str("randseed", absl::StrCat(s.randseed()));
  FioJobFileOptions(j, s, r);
  const std::string& sched = job.first != nullptr && !job.first->applied().scheduler().empty()
                                 ? job.first->applied().scheduler()
                                 : job.cell->queue().scheduler();
  if (!sched.empty()) j.Str("ioscheduler", sched);
  if (job.cell->queue().nr_requests()) {
    j.Str("nr_requests", absl::StrCat(job.cell->queue().nr_requests()));
  }
  if (job.cell->queue().max_sectors_kb()) {
    j.Str("max_sectors_kb", absl::StrCat(job.cell->queue().max_sectors_kb()));
  }
  // The scheduler's tunables the cell set (fifo_batch, slice_idle, ...), in write order.
  for (const IoschedTunableDef& def : IoschedTunables()) {
    const auto it = job.cell->queue().iosched().find(std::string(def.name));
    if (it != job.cell->queue().iosched().end()) j.Str(std::string(def.name), it->second);
  }
  j.Close();
}

// What fio has no key for: which runs, where, on what kernel. A simulated run's kernel is
// the cell's sim: profile, not the agent's.
void BlkbenchFacts(Json& j, const Job& job) {
  j.Open("blkbench");
  j.UInt("cell", job.cell->index());
  if (job.named >= 0) j.Str("job", job.cell->jobs(job.named).name());
  j.OpenArray("runs");
  for (uint64_t id : job.runs) j.UInt("", id);
  j.Close().OpenArray("failed_runs");
  for (uint64_t id : job.failed) j.UInt("", id);
  j.Close();
  const v1::Target& t = job.cell->target();
  j.Str("device_class", t.device_class());
  const bool sim = IsSimulated(t.device_class());
  const std::string kernel = sim                    ? (t.kernel().empty() ? "sim:6.16" : t.kernel())
                             : job.first != nullptr ? job.first->host().kernel_release()
                                                    : t.kernel();
  j.Str("kernel", kernel);
  if (job.first != nullptr) {
    j.Str("runner", job.first->runner());
    if (!sim) j.Str("host", job.first->host().hostname());
  }
  j.Close();
}

void WriteJob(Json& j, const Job& job, bool plus) {
  ResolvedJob r;
  if (auto resolved = ResolveJobOrError(*job.spec); resolved.ok()) r = *resolved;
  const uint64_t runtime_ms = job.runtime_ns / 1'000'000;
  const double secs = static_cast<double>(job.runtime_ns) / 1e9;
  j.Open();
  j.Str("jobname", job.name).UInt("groupid", job.groupid).Int("error", job.error);
  j.Int("eta", 0).UInt("elapsed", (job.runtime_ns + r.ramp_ns * job.runs.size()) / 1'000'000'000);
  JobOptions(j, job, r);
  const uint64_t total = job.read.bytes + job.write.bytes;
  WriteDirection(j, "read", job.read, job.runtime_ns, total, plus);
  WriteDirection(j, "write", job.write, job.runtime_ns, total, plus);
  WriteDirection(j, "trim", Direction{}, job.runtime_ns, total, plus);
  j.Open("sync").UInt("total_ios", job.syncs);
  EmptyLatency(j, "lat_ns");
  j.Close();
  j.UInt("job_runtime", runtime_ms);
  j.Float("usr_cpu", secs > 0 ? static_cast<double>(job.usr_ns) / 1e9 / secs * 100 : 0);
  j.Float("sys_cpu", secs > 0 ? static_cast<double>(job.sys_ns) / 1e9 / secs * 100 : 0);
  j.UInt("ctx", 0).UInt("majf", 0).UInt("minf", 0);
  Depths(j, r);
  LatencyRanges(j, job);
  j.UInt("latency_depth", r.iodepth).UInt("latency_target", 0);
  j.Float("latency_percentile", 100.0).UInt("latency_window", 0);
  BlkbenchFacts(j, job);
  j.Close();
}

std::string Document(const std::vector<const Job*>& jobs, bool plus) {
  int64_t when_ms = 0;
  for (const Job* job : jobs) when_ms = std::max(when_ms, job->finished_ms);
  const time_t secs = static_cast<time_t>(when_ms / 1000);
  char when[64] = "";
  struct tm tm_buf;
  if (localtime_r(&secs, &tm_buf) != nullptr) strftime(when, sizeof(when), "%c", &tm_buf);
  Json j;
  j.Open();
  // fio's version: what the document's shape is; "blkbench" says who wrote it.
  j.Str("fio version", "fio-3.33").Str("blkbench", "results export");
  j.Int("timestamp", when_ms / 1000).Int("timestamp_ms", when_ms).Str("time", when);
  j.OpenArray("jobs");
  for (const Job* job : jobs) WriteJob(j, *job, plus);
  j.Close();
  std::map<std::string, v1::DeviceStats> disks;
  for (const Job* job : jobs) {
    for (const auto& [name, d] : job->disks) {
      v1::DeviceStats& sum = disks[name];
      sum.set_elapsed_s(sum.elapsed_s() + d.elapsed_s());
      sum.set_reads(sum.reads() + d.reads());
      sum.set_writes(sum.writes() + d.writes());
      sum.set_reads_merged(sum.reads_merged() + d.reads_merged());
      sum.set_writes_merged(sum.writes_merged() + d.writes_merged());
      sum.set_r_await_ms(sum.r_await_ms() + d.r_await_ms());
      sum.set_w_await_ms(sum.w_await_ms() + d.w_await_ms());
      sum.set_aqu_sz(sum.aqu_sz() + d.aqu_sz());
      sum.set_util_pct(sum.util_pct() + d.util_pct());
    }
  }
  if (!disks.empty()) {
    // fio's disk_util: the device's own counters (diskstats) over the job's runs.
    j.OpenArray("disk_util");
    for (const auto& [name, d] : disks) {
      j.Open();
      j.Str("name", name).UInt("read_ios", d.reads()).UInt("write_ios", d.writes());
      j.UInt("read_merges", d.reads_merged()).UInt("write_merges", d.writes_merged());
      j.UInt("read_ticks", static_cast<uint64_t>(d.r_await_ms()));
      j.UInt("write_ticks", static_cast<uint64_t>(d.w_await_ms()));
      j.UInt("in_queue", static_cast<uint64_t>(d.aqu_sz()));
      j.Float("util", d.elapsed_s() > 0 ? d.util_pct() / d.elapsed_s() : 0.0);
      j.Close();
    }
    j.Close();
  }
  j.Close();
  return j.Take();
}

}  // namespace

std::string SafeName(const std::string& label) {
  std::string out;
  for (char c : label) {
    const bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '-' || c == '.' || c == '_';
    out += keep ? c : (c == '=' ? '-' : '_');
  }
  return out.empty() ? "cell" : out;
}

std::string FioJsonDocument(const v1::GetResultsResponse& resp, const FioJsonOptions& options) {
  const std::vector<Job> jobs = Jobs(resp, options);
  std::vector<const Job*> all;
  all.reserve(jobs.size());
  for (const Job& job : jobs) all.push_back(&job);
  return Document(all, options.plus);
}

std::vector<FioJsonFile> FioJsonFiles(const v1::GetResultsResponse& resp,
                                      const FioJsonOptions& options) {
  const std::vector<Job> jobs = Jobs(resp, options);
  std::vector<FioJsonFile> files;
  std::map<std::string, int> taken;
  for (const Job& job : jobs) {
    // A named job's file names its cell too: "<cell label>-<job>.json".
    const std::string label = job.named >= 0 ? CellLabel(*job.cell) : "";
    std::string name = SafeName(label.empty() ? job.name : absl::StrCat(label, "-", job.name));
    if (int n = taken[name]++; n > 0) absl::StrAppend(&name, "-", n + 1);
    files.push_back({absl::StrCat(name, ".json"), Document({&job}, options.plus)});
  }
  return files;
}

}  // namespace blkbench
