// Result rows and their JSON and CSV forms; see result_rows.h.
#include "common/metrics/result_rows.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/cell_label.h"
#include "common/http/http_server.h"
#include "common/metrics/run_labels.h"
#include "common/states.h"

namespace blkbench {
namespace {

ResultValue Text(std::string s) { return TextValue(std::move(s)); }
ResultValue Number(double v) { return NumberValue(v); }
ResultValue Seconds(double ns, bool have) { return have ? Number(ns / 1e9) : ResultValue{}; }

// Where the axes go among the fields (after this one), in JSON and CSV alike.
constexpr char kAxesAfter[] = "cell_without_kernel";

}  // namespace

ResultValue TextValue(std::string s) { return {ResultValue::Kind::kText, std::move(s), 0}; }
ResultValue NumberValue(double v) {
  if (!std::isfinite(v)) return {};
  return {ResultValue::Kind::kNumber, "", v};
}

// Integers exactly (ids, counts, bytes); other values to 12 significant digits, which
// is finer than any measurement here. absl::StrCat(double) keeps only 6.
std::string ResultNumberText(double v) {
  if (std::fabs(v) < 9007199254740992.0 && v == std::trunc(v)) {
    return absl::StrCat(static_cast<int64_t>(v));
  }
  char buf[32];
  snprintf(buf, sizeof(buf), "%.12g", v);
  return buf;
}

std::string ResultValueJson(const ResultValue& v) {
  switch (v.kind) {
    case ResultValue::Kind::kText:
      return JsonQuote(v.text);
    case ResultValue::Kind::kNumber:
      return ResultNumberText(v.number);
    case ResultValue::Kind::kNull:
      break;
  }
  return "null";
}

std::string ResultValueText(const ResultValue& v) {
  switch (v.kind) {
    case ResultValue::Kind::kText:
      return v.text;
    case ResultValue::Kind::kNumber:
      return ResultNumberText(v.number);
    case ResultValue::Kind::kNull:
      break;
  }
  return "";
}

std::string CsvField(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += (c == '"') ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

ResultRow MakeResultRow(uint64_t experiment_id, const std::string& experiment_name,
                        const v1::CellSpec& cell, const v1::Run& run) {
  const v1::RunResult& r = run.result();
  const bool have = run.state() == v1::RUN_DONE && run.has_result();
  const KernelLabels k = KernelOf(cell, r.host().kernel_release());
  const v1::LatencySummary& lat = r.lat_summary();
  const v1::JobSpec& job = cell.job();
  ResultRow row;
  auto add = [&row](const char* name, ResultValue v) {
    row.fields.emplace_back(name, std::move(v));
  };
  auto num = [&](double v) { return have ? Number(v) : ResultValue{}; };
  add("experiment", Number(static_cast<double>(experiment_id)));
  add("experiment_name", Text(experiment_name));
  add("run", Number(static_cast<double>(run.id())));
  add("cell_index", Number(run.cell_index()));
  add("cell", Text(CellLabel(cell)));
  add("cell_without_kernel", Text(CellLabelWithout(cell, "kernel")));
  add("repeat", Number(run.repeat()));
  add("attempt", Number(run.attempt()));
  add("state", Text(RunStateName(run.state())));
  add("error", Text(run.error()));
  add("agent", Text(run.agent_id()));
  add("host", Text(r.host().hostname()));
  add("kernel", Text(k.kernel));
  add("virt", Text(VirtOf(r.device())));
  add("kernel_source", Text(have ? KernelSourceOf(cell, r.device()) : ""));
  add("profile", Text(k.profile));
  add("patches", Text(k.patches));
  add("device", Text(run.device_path()));
  add("device_class", Text(cell.target().device_class()));
  add("scheduler", Text(SchedulerOf(cell)));
  add("runner", Text(r.runner()));
  add("rw", Text(FioRwName(job.rw())));
  add("bs", Number(static_cast<double>(job.bs())));
  add("iodepth", Number(job.iodepth()));
  add("numjobs", Number(job.numjobs()));
  add("read_ios", num(static_cast<double>(r.io().read_ios())));
  add("write_ios", num(static_cast<double>(r.io().write_ios())));
  add("read_bytes", num(static_cast<double>(r.io().read_bytes())));
  add("write_bytes", num(static_cast<double>(r.io().write_bytes())));
  add("iops", num(r.iops()));
  add("bandwidth_bytes_per_second", num(r.bw_bytes_per_sec()));
  add("latency_mean_seconds", Seconds(lat.mean_ns(), have));
  add("latency_p50_seconds", Seconds(static_cast<double>(lat.p50_ns()), have));
  add("latency_p99_seconds", Seconds(static_cast<double>(lat.p99_ns()), have));
  add("latency_p999_seconds", Seconds(static_cast<double>(lat.p999_ns()), have));
  add("latency_max_seconds", Seconds(static_cast<double>(lat.max_ns()), have));
  add("usr_cpu_seconds", Seconds(static_cast<double>(r.usr_cpu_ns()), have));
  add("sys_cpu_seconds", Seconds(static_cast<double>(r.sys_cpu_ns()), have));
  add("duration_seconds", Seconds(static_cast<double>(r.duration_ns()), have));
  add("finished_unix_ms",
      run.finished_unix_ms() ? Number(static_cast<double>(run.finished_unix_ms())) : ResultValue{});
  for (const v1::AxisValue& a : cell.axes()) row.axes.emplace_back(a.key(), a.value());
  if (have) row.internals.insert(r.internals().begin(), r.internals().end());
  for (int j = 0; have && j < r.jobs_size(); ++j) {
    const v1::JobResult& jr = r.jobs(j);
    const v1::JobSpec& spec = j < cell.jobs_size() ? cell.jobs(j).job() : cell.job();
    const v1::LatencySummary& jl = jr.lat_summary();
    auto& f = row.jobs.emplace_back();
    f.emplace_back("name", Text(jr.name()));
    f.emplace_back("rw", Text(FioRwName(spec.rw())));
    f.emplace_back("bs", Number(static_cast<double>(spec.bs())));
    f.emplace_back("iodepth", Number(spec.iodepth()));
    f.emplace_back("numjobs", Number(spec.numjobs()));
    f.emplace_back("read_ios", Number(static_cast<double>(jr.io().read_ios())));
    f.emplace_back("write_ios", Number(static_cast<double>(jr.io().write_ios())));
    f.emplace_back("read_bytes", Number(static_cast<double>(jr.io().read_bytes())));
    f.emplace_back("write_bytes", Number(static_cast<double>(jr.io().write_bytes())));
    f.emplace_back("iops", Number(jr.iops()));
    f.emplace_back("bandwidth_bytes_per_second", Number(jr.bw_bytes_per_sec()));
    f.emplace_back("latency_mean_seconds", Seconds(jl.mean_ns(), true));
    f.emplace_back("latency_p50_seconds", Seconds(static_cast<double>(jl.p50_ns()), true));
    f.emplace_back("latency_p99_seconds", Seconds(static_cast<double>(jl.p99_ns()), true));
    f.emplace_back("latency_p999_seconds", Seconds(static_cast<double>(jl.p999_ns()), true));
    f.emplace_back("latency_max_seconds", Seconds(static_cast<double>(jl.max_ns()), true));
  }
  return row;
}

std::string ResultRowJson(const ResultRow& row) {
  std::string out = "{";
  bool first = true;
  for (const auto& [name, value] : row.fields) {
    absl::StrAppend(&out, first ? "" : ", ", JsonQuote(name), ": ", ResultValueJson(value));
    first = false;
    if (name == kAxesAfter) {
      absl::StrAppend(&out, ", \"axes\": {");
      for (size_t i = 0; i < row.axes.size(); ++i) {
        absl::StrAppend(&out, i ? ", " : "", JsonQuote(row.axes[i].first), ": ",
                        JsonQuote(row.axes[i].second));
      }
      absl::StrAppend(&out, "}");
    }
  }
  absl::StrAppend(&out, ", \"internals\": {");
  first = true;
  for (const auto& [key, value] : row.internals) {
    absl::StrAppend(&out, first ? "" : ", ", JsonQuote(key), ": ", ResultValueJson(Number(value)));
    first = false;
  }
  out += "}";
  if (!row.jobs.empty()) {
    absl::StrAppend(&out, ", \"jobs\": [");
    for (size_t j = 0; j < row.jobs.size(); ++j) {
      absl::StrAppend(&out, j ? ", " : "", "{");
      for (size_t i = 0; i < row.jobs[j].size(); ++i) {
        absl::StrAppend(&out, i ? ", " : "", JsonQuote(row.jobs[j][i].first), ": ",
                        ResultValueJson(row.jobs[j][i].second));
      }
      out += "}";
    }
    out += "]";
  }
  return out + "}";
}

std::string ResultRowsJson(const std::vector<ResultRow>& rows) {
  if (rows.empty()) return "[]\n";
  std::string out = "[";
  for (size_t i = 0; i < rows.size(); ++i) {
    absl::StrAppend(&out, i ? ",\n " : "\n ", ResultRowJson(rows[i]));
  }
  return out + "\n]\n";
}

std::string ResultRowsCsv(const std::vector<ResultRow>& rows) {
  std::vector<std::string> axis_keys, internal_keys;
  for (const ResultRow& row : rows) {
    for (const auto& [key, value] : row.axes) {
      if (std::find(axis_keys.begin(), axis_keys.end(), key) == axis_keys.end()) {
        axis_keys.push_back(key);
      }
    }
    for (const auto& [key, value] : row.internals) {
      if (std::find(internal_keys.begin(), internal_keys.end(), key) == internal_keys.end()) {
        internal_keys.push_back(key);
      }
    }
  }
  std::sort(internal_keys.begin(), internal_keys.end());
  std::vector<std::string> header;
  // The schema's field names, from any row (every row has the same fields).
  const ResultRow names = rows.empty() ? MakeResultRow(0, "", v1::CellSpec(), v1::Run()) : rows[0];
  for (const auto& [name, value] : names.fields) {
    header.push_back(name);
    if (name == kAxesAfter) {
      for (const std::string& k : axis_keys) header.push_back("axes." + k);
    }
  }
  for (const std::string& k : internal_keys) header.push_back("internals." + k);
  std::string out;
  for (size_t i = 0; i < header.size(); ++i)
    absl::StrAppend(&out, i ? "," : "", CsvField(header[i]));
  out += "\n";
  for (const ResultRow& row : rows) {
    std::vector<std::string> cells;
    for (const auto& [name, value] : row.fields) {
      cells.push_back(CsvField(ResultValueText(value)));
      if (name != kAxesAfter) continue;
      for (const std::string& k : axis_keys) {
        auto it = std::find_if(row.axes.begin(), row.axes.end(),
                               [&k](const auto& a) { return a.first == k; });
        cells.push_back(it == row.axes.end() ? "" : CsvField(it->second));
      }
    }
    for (const std::string& k : internal_keys) {
      auto it = row.internals.find(k);
      cells.push_back(it == row.internals.end() ? "" : ResultValueText(Number(it->second)));
    }
    out += absl::StrJoin(cells, ",") + "\n";
  }
  return out;
}

}  // namespace blkbench
