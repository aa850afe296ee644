// Text formatting for the CLI; see format.h.
#include "cli/format.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cli/fio_json.h"
#include "common/disk_interval.h"
#include "common/histogram.h"
#include "common/http/http_server.h"
#include "common/metrics/result_rows.h"
#include "common/metrics/run_labels.h"
#include "workloads/format.h"

namespace blkbench {
namespace {

bool LooksNumeric(const std::string& s) {
  return !s.empty() && (std::isdigit(static_cast<unsigned char>(s[0])) || s[0] == '-') && s != "-";
}

std::string OrDash(std::string s) {
  if (s.empty()) return "-";
  return s;
}

std::string Fixed(double v, int decimals) {
  char buf[64];
  snprintf(buf, sizeof(buf), "%.*f", decimals, v);
  return buf;
}

}  // namespace

std::string TextTable::ToString() const {
  std::vector<size_t> width(header_.size(), 0);
  for (size_t i = 0; i < header_.size(); ++i) width[i] = header_[i].size();
  for (const auto& row : rows_) {
    for (size_t i = 0; i < row.size() && i < width.size(); ++i) {
      width[i] = std::max(width[i], row[i].size());
    }
  }
  auto line = [&](const std::vector<std::string>& row, bool header) {
    std::string out;
    for (size_t i = 0; i < width.size(); ++i) {
      const std::string cell = i < row.size() ? row[i] : "";
      const std::string pad(width[i] - std::min(width[i], cell.size()), ' ');
      if (i) out += "  ";
      out += (!header && LooksNumeric(cell)) ? pad + cell : cell + pad;
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    return out + "\n";
  };
  std::string out = line(header_, true);
  for (const auto& row : rows_) out += line(row, false);
  return out;
}

std::string TextTable::ToCsv() const {
  std::string out;
  std::vector<std::string> cells;
  for (const auto& h : header_) cells.push_back(CsvField(h));
  out += absl::StrJoin(cells, ",") + "\n";
  for (const auto& row : rows_) {
    cells.clear();
    for (const auto& c : row) cells.push_back(CsvField(c));
    out += absl::StrJoin(cells, ",") + "\n";
  }
  return out;
}

std::string Records::Render(const std::string& format) const {
  if (format == "json") {
    if (rows_.empty()) return "[]\n";
    std::string out = "[";
    for (size_t r = 0; r < rows_.size(); ++r) {
      absl::StrAppend(&out, r ? ",\n " : "\n ", "{");
      for (size_t i = 0; i < columns_.size() && i < rows_[r].size(); ++i) {
        absl::StrAppend(&out, i ? ", " : "", JsonQuote(columns_[i]), ": ",
                        ResultValueJson(rows_[r][i]));
      }
      out += "}";
    }
    return out + "\n]\n";
  }
  TextTable t(columns_);
  for (const auto& row : rows_) {
    std::vector<std::string> cells;
    cells.reserve(row.size());
    for (const ResultValue& v : row) {
      cells.push_back(format == "csv" ? ResultValueText(v) : OrDash(ResultValueText(v)));
    }
    t.AddRow(cells);
  }
  return format == "csv" ? t.ToCsv() : t.ToString();
}

std::string FormatIops(double iops) {
  if (iops >= 1e6) return Fixed(iops / 1e6, 2) + "M";
  if (iops >= 1e3) return Fixed(iops / 1e3, 1) + "k";
  return Fixed(iops, 0);
}

std::string FormatBandwidth(double bps) {
  if (bps >= 1024.0 * 1024 * 1024) return Fixed(bps / (1024.0 * 1024 * 1024), 2) + " GiB/s";
  if (bps >= 1024.0 * 1024) return Fixed(bps / (1024.0 * 1024), 1) + " MiB/s";
  return Fixed(bps / 1024.0, 1) + " KiB/s";
}

std::string FormatLatency(uint64_t ns) {
  if (ns >= 1'000'000'000) return Fixed(ns / 1e9, 2) + "s";
  if (ns >= 1'000'000) return Fixed(ns / 1e6, 2) + "ms";
  if (ns >= 1'000) return Fixed(ns / 1e3, 1) + "us";
  return absl::StrCat(ns, "ns");
}

std::string FormatDuration(int64_t ms) {
  if (ms < 0) ms = 0;
  const int64_t s = (ms + 999) / 1000;
  if (s >= 3600)
    return absl::StrCat(s / 3600, "h", (s % 3600) / 60 < 10 ? "0" : "", (s % 3600) / 60, "m");
  if (s >= 60) return absl::StrCat(s / 60, "m", s % 60 < 10 ? "0" : "", s % 60, "s");
  return absl::StrCat(s, "s");
}

std::string ProgressBar(uint32_t done, uint32_t total, int width) {
  const int filled = total ? static_cast<int>(static_cast<uint64_t>(done) * width / total) : 0;
  return "[" + std::string(filled, '#') + std::string(width - filled, '.') + "]";
}

Records SampleRecords(const v1::GetResultsResponse& resp) {
  Records t({"run", "seq", "offset_seconds", "interval_seconds", "read_ios", "write_ios",
             "read_bytes", "write_bytes", "iops", "bandwidth_bytes_per_second",
             "latency_p50_seconds", "latency_p99_seconds", "device_util_pct", "device_aqu_sz",
             "device_in_flight", "device_r_await_seconds", "device_w_await_seconds",
             "device_reads_merged", "device_writes_merged"});
  for (const auto& row : resp.rows()) {
    for (const v1::Sample& s : row.samples()) {
      const double interval = static_cast<double>(s.interval_ns()) / 1e9;
      const double ios = static_cast<double>(s.io().read_ios() + s.io().write_ios());
      const double bytes = static_cast<double>(s.io().read_bytes() + s.io().write_bytes());
      ResultValue p50, p99;
      if (auto h = LatencyHistogram::FromProto(s.lat()); h.ok() && h->count() > 0) {
        p50 = NumberValue(static_cast<double>(h->Percentile(50)) / 1e9);
        p99 = NumberValue(static_cast<double>(h->Percentile(99)) / 1e9);
      }
      // iostat -x of the device over the interval: real block devices only.
      ResultValue util, aqu, in_flight, r_await, w_await, r_merged, w_merged;
      if (s.has_device()) {
        const v1::DiskStatsInterval& d = s.device();
        const DiskIntervalStats st = IntervalStats(d, interval);
        util = NumberValue(st.util_pct);
        aqu = NumberValue(st.aqu_sz);
        in_flight = NumberValue(static_cast<double>(d.in_flight()));
        r_await = NumberValue(st.r_await_ms / 1e3);
        w_await = NumberValue(st.w_await_ms / 1e3);
        r_merged = NumberValue(static_cast<double>(d.reads_merged()));
        w_merged = NumberValue(static_cast<double>(d.writes_merged()));
      }
      t.Add({NumberValue(static_cast<double>(row.run().id())),
             NumberValue(static_cast<double>(s.seq())),
             NumberValue(static_cast<double>(s.offset_ns()) / 1e9), NumberValue(interval),
             NumberValue(static_cast<double>(s.io().read_ios())),
             NumberValue(static_cast<double>(s.io().write_ios())),
             NumberValue(static_cast<double>(s.io().read_bytes())),
             NumberValue(static_cast<double>(s.io().write_bytes())),
             interval > 0 ? NumberValue(ios / interval) : ResultValue{},
             interval > 0 ? NumberValue(bytes / interval) : ResultValue{}, p50, p99, util, aqu,
             in_flight, r_await, w_await, r_merged, w_merged});
    }
  }
  return t;
}

int PrintFioJson(const v1::GetResultsResponse& resp, const std::string& format,
                 const std::string& per, const std::string& out_dir, std::ostream& out,
                 std::ostream& err, bool group_reporting) {
  FioJsonOptions o;
  o.group_reporting = group_reporting;
  o.per = per == "run" ? FioJsonOptions::Per::kRun : FioJsonOptions::Per::kCell;
  o.plus = format == "fio-json+";
  if (out_dir.empty()) {
    out << FioJsonDocument(resp, o);
    return 0;
  }
  std::error_code ec;
  std::filesystem::create_directories(out_dir, ec);
  if (ec) {
    err << "blkbench: cannot create " << out_dir << ": " << ec.message() << "\n";
    return 1;
  }
  for (const FioJsonFile& f : FioJsonFiles(resp, o)) {
    const std::filesystem::path path = std::filesystem::path(out_dir) / f.name;
    std::ofstream file(path);
    file << f.json;
    file.close();
    if (!file) {
      err << "blkbench: cannot write " << path.string() << "\n";
      return 1;
    }
    out << path.string() << "\n";
  }
  return 0;
}

void PrintResults(const v1::GetResultsResponse& resp, const std::string& format,
                  std::ostream& out) {
  if (format == "fio-json" || format == "fio-json+") {
    PrintFioJson(resp, format, "cell", "", out, out);
    return;
  }
  if (format == "json" || format == "csv") {
    std::vector<ResultRow> rows;
    for (const auto& row : resp.rows()) {
      rows.push_back(
          MakeResultRow(resp.experiment().id(), resp.experiment().name(), row.cell(), row.run()));
    }
    out << (format == "json" ? ResultRowsJson(rows) : ResultRowsCsv(rows));
    return;
  }
  // The kernel each run ran on, and how it was virtualised, when that differs between runs
  // or any ran in a VM test host: a kernel axis over real kernels shows the releases.
  std::set<std::string> kernels;
  bool in_vm = false, tcg = false;
  for (const auto& row : resp.rows()) {
    const v1::RunResult& res = row.run().result();
    if (row.run().state() != v1::RUN_DONE) continue;
    kernels.insert(KernelOf(row.cell(), res.host().kernel_release()).kernel);
    in_vm = in_vm || !VirtOf(res.device()).empty();
    tcg = tcg || VirtOf(res.device()) == "tcg";
  }
  const bool show_kernel = in_vm || kernels.size() > 1;
  std::vector<std::string> header = {"run", "cell", "axes", "rep", "state", "agent", "device"};
  if (show_kernel) header.insert(header.end(), {"kernel", "virt"});
  header.insert(header.end(), {"sched", "IOPS", "BW_MiB/s", "p50_us", "p99_us", "p99.9_us",
                               "max_us", "cpu_us/io", "error"});
  TextTable t(header);
  for (const auto& row : resp.rows()) {
    const v1::Run& r = row.run();
    const v1::RunResult& res = r.result();
    const bool done = r.state() == v1::RUN_DONE;
    const uint64_t ios = res.io().read_ios() + res.io().write_ios();
    auto us = [](uint64_t ns) {
      char b[32];
      snprintf(b, sizeof(b), "%.1f", ns / 1e3);
      return std::string(b);
    };
    char iops[32], bw[32], cpu[32];
    snprintf(iops, sizeof(iops), "%.0f", res.iops());
    snprintf(bw, sizeof(bw), "%.1f", res.bw_bytes_per_sec() / (1024.0 * 1024.0));
    snprintf(cpu, sizeof(cpu), "%.2f",
             ios ? (res.usr_cpu_ns() + res.sys_cpu_ns()) / 1e3 / ios : 0.0);
    const auto& l = res.lat_summary();
    std::vector<std::string> cells = {
        absl::StrCat(r.id()),     absl::StrCat(r.cell_index()), workloads::CellLabel(row.cell()),
        absl::StrCat(r.repeat()), RunStateName(r.state()),      r.agent_id(),
        r.device_path()};
    if (show_kernel) {
      cells.push_back(done ? KernelOf(row.cell(), res.host().kernel_release()).kernel : "");
      cells.push_back(done ? VirtOf(res.device()) : "");
    }
    cells.insert(cells.end(), {done ? res.applied().scheduler() : "", done ? iops : "",
                               done ? bw : "", done ? us(l.p50_ns()) : "",
                               done ? us(l.p99_ns()) : "", done ? us(l.p999_ns()) : "",
                               done ? us(l.max_ns()) : "", done ? cpu : "", r.error()});
    t.AddRow(std::move(cells));
    // A cell's named jobs: one row each under the run's total (CPU is the run's only).
    for (const v1::JobResult& j : res.jobs()) {
      snprintf(iops, sizeof(iops), "%.0f", j.iops());
      snprintf(bw, sizeof(bw), "%.1f", j.bw_bytes_per_sec() / (1024.0 * 1024.0));
      const auto& jl = j.lat_summary();
      std::vector<std::string> job = {"", "", absl::StrCat("  job ", j.name()), "", "", "", ""};
      if (show_kernel) job.insert(job.end(), {"", ""});
      job.insert(job.end(), {"", iops, bw, us(jl.p50_ns()), us(jl.p99_ns()), us(jl.p999_ns()),
                             us(jl.max_ns()), "", ""});
      t.AddRow(std::move(job));
    }
  }
  out << t.ToString();
  if (tcg) out << "note: virt tcg: " << kTcgCaveat << "\n";
}

}  // namespace blkbench
