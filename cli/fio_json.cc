// Results as fio's --output-format=json, so tools that read fio output (fio_jsonplus
// parsers, fio2gnuplot-style scripts, dashboards) read blkbench results too. One fio
// "job" per run; latency percentiles come from the run's merged histograms.
#include "cli/fio_json.h"

#include <cstdio>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/histogram.h"
#include "workloads/format.h"

namespace blkbench {
namespace {

// fio's default percentile_list (options.c).
constexpr double kPercentiles[] = {1,  5,  10, 20, 30,   40,   50,    60,   70,
                                   80, 90, 95, 99, 99.5, 99.9, 99.95, 99.99};

std::string Quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      snprintf(buf, sizeof(buf), "\\u%04x", c);
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string Num(double v) {
  char buf[64];
  snprintf(buf, sizeof(buf), "%.6f", v);
  return buf;
}

// fio's "lat_ns"/"clat_ns" object from one histogram.
std::string LatencyObject(const v1::Histogram& proto) {
  auto h = LatencyHistogram::FromProto(proto);
  if (!h.ok() || h->count() == 0) {
    return "{\"min\": 0, \"max\": 0, \"mean\": 0.000000, \"stddev\": 0.000000, \"N\": 0}";
  }
  std::string out = absl::StrCat(
      "{\"min\": ", h->min_ns(), ", \"max\": ", h->max_ns(), ", \"mean\": ", Num(h->mean_ns()),
      ", \"stddev\": 0.000000, \"N\": ", h->count(), ", \"percentile\": {");
  bool first = true;
  for (double p : kPercentiles) {
    absl::StrAppend(&out, first ? "" : ", ", "\"", Num(p), "\": ", h->Percentile(p));
    first = false;
  }
  return out + "}}";
}

std::string Direction(uint64_t ios, uint64_t bytes, uint64_t runtime_ns, const v1::Histogram& lat) {
  const double secs = runtime_ns / 1e9;
  const double bw = secs > 0 ? bytes / secs : 0;
  const std::string lat_obj = LatencyObject(lat);
  return absl::StrCat(
      "{\"io_bytes\": ", bytes, ", \"io_kbytes\": ", bytes / 1024,
      ", \"bw_bytes\": ", static_cast<uint64_t>(bw), ", \"bw\": ", static_cast<uint64_t>(bw / 1024),
      ", \"iops\": ", Num(secs > 0 ? ios / secs : 0), ", \"runtime\": ", runtime_ns / 1'000'000,
      ", \"total_ios\": ", ios, ", \"short_ios\": 0, \"drop_ios\": 0, \"clat_ns\": ", lat_obj,
      ", \"lat_ns\": ", lat_obj, "}");
}

}  // namespace

std::string ResultsAsFioJson(const v1::GetResultsResponse& resp) {
  std::string out = "{\n  \"fio version\": \"blkbench\",\n  \"jobs\": [";
  bool first = true;
  for (const v1::ResultRow& row : resp.rows()) {
    const v1::Run& run = row.run();
    if (run.state() != v1::RUN_DONE) continue;
    const v1::RunResult& r = run.result();
    const double secs = r.duration_ns() / 1e9;
    const std::string name =
        absl::StrCat("run", run.id(), " ", workloads::CellLabel(row.cell()), " rep", run.repeat());
    absl::StrAppend(
        &out, first ? "\n" : ",\n", "    {\"jobname\": ", Quote(name),
        ", \"groupid\": ", run.cell_index(), ", \"error\": 0",
        ",\n     \"job options\": {\"rw\": ", Quote(v1::RwMode_Name(row.cell().job().rw())),
        ", \"bs\": \"", row.cell().job().bs(), "\", \"iodepth\": \"", row.cell().job().iodepth(),
        "\", \"numjobs\": \"", row.cell().job().numjobs(),
        "\", \"scheduler\": ", Quote(r.applied().scheduler()),
        ", \"host\": ", Quote(r.host().hostname()),
        ", \"kernel\": ", Quote(r.host().kernel_release()),
        ", \"device\": ", Quote(r.device().path()), "}", ",\n     \"read\": ",
        Direction(r.io().read_ios(), r.io().read_bytes(), r.duration_ns(), r.read_lat()),
        ",\n     \"write\": ",
        Direction(r.io().write_ios(), r.io().write_bytes(), r.duration_ns(), r.write_lat()),
        ",\n     \"usr_cpu\": ", Num(secs > 0 ? r.usr_cpu_ns() / 1e9 / secs * 100 : 0),
        ", \"sys_cpu\": ", Num(secs > 0 ? r.sys_cpu_ns() / 1e9 / secs * 100 : 0),
        ", \"job_runtime\": ", r.duration_ns() / 1'000'000, "}");
    first = false;
  }
  return out + "\n  ]\n}\n";
}

}  // namespace blkbench
