// RenderExperimentReport: see report.h. Markup is well-formed XML (every element closed,
// attributes quoted, text escaped), as the gate's report is, so a parser can check it.
#include "cli/report.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "cli/report_plot.h"
#include "common/cell_label.h"
#include "common/disk_interval.h"
#include "common/histogram.h"
#include "common/metrics/run_labels.h"
#include "common/resolved_job.h"
#include "common/sim_vocabulary.h"
#include "common/states.h"
#include "controller/gate/gate_format.h"

namespace blkbench {
namespace {

using report::Axis;
using report::LinePlot;
using report::PlotLayout;
using report::Series;

constexpr char kStyle[] = R"(
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:24px;color:#222}
h1{font-size:20px}h2{font-size:17px;margin-top:28px}
table{border-collapse:collapse;font-size:13px;margin:6px 0}
th,td{border:1px solid #ccc;padding:3px 7px;text-align:right}th{background:#f3f3f3}
td.l,th.l{text-align:left}.warn{color:#a40;font-weight:bold}
figcaption{font-size:13px;font-weight:600;margin-bottom:4px}.note{font-size:12px;color:#555}
.failed td{background:#f8d7da}code{font-size:12px;background:#f5f5f5;padding:2px 4px}
)";

std::string Esc(std::string_view s) { return gate::XmlEscape(s); }

std::string Num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

// A value for a table: 3 significant digits with k/M/G.
std::string Short(double v) {
  const char* unit = "";
  for (const char* u : {"k", "M", "G"}) {
    if (std::fabs(v) < 1000) break;
    v /= 1000;
    unit = u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, std::fabs(v) >= 100 ? "%.0f%s" : "%.3g%s", v, unit);
  return buf;
}

std::string NsText(double ns) {
  if (ns >= 1e9) return absl::StrCat(Short(ns / 1e9), " s");
  if (ns >= 1e6) return absl::StrCat(Short(ns / 1e6), " ms");
  if (ns >= 1e3) return absl::StrCat(Short(ns / 1e3), " µs");
  return absl::StrCat(Short(ns), " ns");
}

// What one cell's finished runs add up to.
struct Cell {
  const v1::CellSpec* spec = nullptr;
  std::string label;
  std::vector<const v1::ResultRow*> done, failed;
  std::vector<double> iops, bw;          // per done run
  LatencyHistogram lat;                  // merged
  std::map<std::string, double> groups;  // cgroup.<g>.ios summed
  // Named jobs (RunResult.jobs), in the cell's order: IOPS per done run, latency merged.
  std::vector<std::string> jobs;
  std::map<std::string, std::vector<double>> job_iops;
  std::map<std::string, LatencyHistogram> job_lat;
};

double Mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return v.empty() ? 0 : s / static_cast<double>(v.size());
}

std::string AxisValue(const v1::CellSpec& c, const std::string& key) {
  for (const v1::AxisValue& a : c.axes()) {
    if (a.key() == key) return a.value();
  }
  return "";
}

// The cell's other axes, as the name of its line in a plot against `key`.
std::string OtherAxes(const v1::CellSpec& c, const std::string& key) {
  std::vector<std::string> parts;
  for (const v1::AxisValue& a : c.axes()) {
    if (a.key() != key) parts.push_back(absl::StrCat(a.key(), "=", a.value()));
  }
  return parts.empty() ? "all" : absl::StrJoin(parts, " ");
}

std::string Time(int64_t unix_ms) {
  if (unix_ms <= 0) return "-";
  return absl::FormatTime("%Y-%m-%d %H:%M:%S UTC", absl::FromUnixMillis(unix_ms),
                          absl::UTCTimeZone());
}

std::string AxesSection(const std::vector<Cell>& cells) {
  // The axes in file order, each with its values in order of appearance.
  std::vector<std::pair<std::string, std::vector<std::string>>> axes;
  for (const Cell& c : cells) {
    for (const v1::AxisValue& a : c.spec->axes()) {
      auto it =
          std::find_if(axes.begin(), axes.end(), [&](const auto& e) { return e.first == a.key(); });
      if (it == axes.end()) {
        axes.push_back({a.key(), {}});
        it = axes.end() - 1;
      }
      if (std::find(it->second.begin(), it->second.end(), a.value()) == it->second.end()) {
        it->second.push_back(a.value());
      }
    }
  }
  std::string out =
      "<h2>IOPS against each axis</h2><p class=\"note\">Mean over the repeats; "
      "whiskers span the slowest and fastest repeat. One line per combination "
      "of the other axes.</p><div class=\"plots\">";
  for (size_t ai = 0; ai < axes.size(); ++ai) {
    const auto& [key, values] = axes[ai];
    std::map<std::string, Series> lines;
    std::vector<std::string> order;
    for (const Cell& c : cells) {
      if (c.iops.empty()) continue;
      const std::string name = OtherAxes(*c.spec, key);
      if (!lines.count(name)) order.push_back(name);
      Series& s = lines[name];
      s.name = name;
      const double x = static_cast<double>(
          std::find(values.begin(), values.end(), AxisValue(*c.spec, key)) - values.begin());
      s.points.emplace_back(x, Mean(c.iops));
      s.range.emplace_back(*std::min_element(c.iops.begin(), c.iops.end()),
                           *std::max_element(c.iops.begin(), c.iops.end()));
    }
    std::vector<Series> series;
    for (const std::string& name : order) {
      Series s = lines[name];
      // In axis order, whiskers with their points.
      std::vector<size_t> idx(s.points.size());
      for (size_t i = 0; i < idx.size(); ++i) idx[i] = i;
      std::sort(idx.begin(), idx.end(),
                [&](size_t a, size_t b) { return s.points[a].first < s.points[b].first; });
      Series sorted{s.name, {}, {}};
      for (size_t i : idx) {
        sorted.points.push_back(s.points[i]);
        sorted.range.push_back(s.range[i]);
      }
      series.push_back(std::move(sorted));
    }
    // Two plots to a row; an odd last one takes the row.
    const bool wide = ai + 1 == axes.size() && axes.size() % 2 == 1;
    out += LinePlot("axis:" + key, "IOPS by " + key, series, Axis::Category(key, values),
                    Axis::Linear("IOPS"), PlotLayout{wide, ""});
  }
  if (axes.empty()) {
    std::vector<Series> one;
    for (const Cell& c : cells) {
      if (!c.iops.empty()) {
        one.push_back({c.label,
                       {{0, Mean(c.iops)}},
                       {{*std::min_element(c.iops.begin(), c.iops.end()),
                         *std::max_element(c.iops.begin(), c.iops.end())}}});
      }
    }
    out += LinePlot("axis:(none)", "IOPS", one, Axis::Category("", {"the cell"}),
                    Axis::Linear("IOPS"), PlotLayout{true, ""});
  }
  return out + "</div>";
}

constexpr double kPcts[] = {50, 90, 99, 99.9, 99.99};

std::string LatencySection(const std::vector<Cell>& cells) {
  std::string out =
      "<h2>Latency</h2><p class=\"note\">From each cell's histograms merged over its "
      "repeats (fio's log-linear buckets).</p><table><tr><th class=\"l\">cell</th><th>I/Os</th>"
      "<th>mean</th><th>p50</th><th>p90</th><th>p99</th><th>p99.9</th><th>p99.99</th>"
      "<th>max</th></tr>";
  std::vector<Series> pct, cdf;
  for (const Cell& c : cells) {
    if (c.lat.count() == 0) continue;
    absl::StrAppend(&out, "<tr><td class=\"l\">", Esc(c.label), "</td><td>",
                    Short(static_cast<double>(c.lat.count())), "</td><td>",
                    Esc(NsText(c.lat.mean_ns())), "</td>");
    Series p{c.label, {}, {}};
    for (size_t i = 0; i < std::size(kPcts); ++i) {
      const double v = static_cast<double>(c.lat.Percentile(kPcts[i]));
      absl::StrAppend(&out, "<td>", Esc(NsText(v)), "</td>");
      p.points.emplace_back(static_cast<double>(i), v);
    }
    absl::StrAppend(&out, "<td>", Esc(NsText(static_cast<double>(c.lat.max_ns()))), "</td></tr>");
    pct.push_back(std::move(p));
    // The CDF: the share of I/Os at or below each non-empty bucket.
    v1::Histogram h;
    c.lat.ToProto(&h);
    Series s{c.label, {}, {}};
    uint64_t below = 0;
    for (int i = 0; i < h.bucket_index_size(); ++i) {
      below += h.bucket_count(i);
      s.points.emplace_back(static_cast<double>(LatencyHistogram::BucketValue(h.bucket_index(i))),
                            static_cast<double>(below) / static_cast<double>(c.lat.count()));
    }
    cdf.push_back(std::move(s));
  }
  out += "</table><div class=\"plots\">";
  out += LinePlot("percentiles", "Latency percentiles", pct,
                  Axis::Category("percentile", {"p50", "p90", "p99", "p99.9", "p99.99"}),
                  Axis::Log("latency", true));
  out += LinePlot("cdf", "Latency CDF", cdf, Axis::Log("latency", true),
                  Axis::Linear("share of I/Os at or below"));
  return out + "</div>";
}

// A sample interval shorter than this share of its run's longest is not drawn: the last
// interval of a run is cut where the run ends, and a rate over a few milliseconds of
// counters (iostat's io_ms ticks in whole milliseconds) reads as a spike to 100 % or 0.
// Longer partial intervals are drawn, as rates over their own length.
constexpr double kMinIntervalShare = 0.5;

std::string TimeSeriesSection(const std::vector<Cell>& cells) {
  // IOPS of every run; the device's util % and aqu-sz (iostat -x) for runs on real block
  // devices, whose samples carry the device's counters.
  std::vector<Series> series, util, aqu;
  int dropped = 0;
  for (const Cell& c : cells) {
    for (const v1::ResultRow* row : c.done) {
      const std::string name = absl::StrCat(c.label, " rep", row->run().repeat());
      Series s{name, {}, {}}, u{name, {}, {}}, q{name, {}, {}};
      uint64_t longest = 0;
      for (const v1::Sample& smp : row->samples()) longest = std::max(longest, smp.interval_ns());
      for (const v1::Sample& smp : row->samples()) {
        if (smp.interval_ns() == 0) continue;
        if (static_cast<double>(smp.interval_ns()) <
            kMinIntervalShare * static_cast<double>(longest)) {
          ++dropped;
          continue;
        }
        const double at = static_cast<double>(smp.offset_ns()) / 1e9;
        const double seconds = static_cast<double>(smp.interval_ns()) / 1e9;
        const double ios = static_cast<double>(smp.io().read_ios() + smp.io().write_ios());
        s.points.emplace_back(at, ios / seconds);
        if (smp.has_device()) {
          const DiskIntervalStats st = IntervalStats(smp.device(), seconds);
          u.points.emplace_back(at, st.util_pct);
          q.points.emplace_back(at, st.aqu_sz);
        }
      }
      if (!s.points.empty()) series.push_back(std::move(s));
      if (!u.points.empty()) util.push_back(std::move(u));
      if (!q.points.empty()) aqu.push_back(std::move(q));
    }
  }
  if (series.empty()) return "";
  const std::string note =
      dropped == 0 ? ""
                   : absl::StrCat(dropped, " partial interval", dropped == 1 ? "" : "s",
                                  " at the end of a run (shorter than half the run's longest "
                                  "interval) not drawn: a rate over so short a time is noise.");
  const Axis time = Axis::Linear("seconds into the run (after ramp)");
  std::string out =
      "<h2>Per interval</h2><p class=\"note\">Each point is one sample "
      "interval, at its end, as a rate over the interval's own length.</p>"
      "<div class=\"plots\">" +
      LinePlot("timeseries", "IOPS per sample interval, each run", series, time,
               Axis::Linear("IOPS"), PlotLayout{true, note});
  if (!util.empty()) {
    out += LinePlot("device-util", "Device utilisation per interval (iostat %util)", util, time,
                    Axis::Linear("util %"), PlotLayout{false, note});
    out += LinePlot("device-aqu", "Requests in flight at the device per interval (iostat aqu-sz)",
                    aqu, time, Axis::Linear("aqu-sz"), PlotLayout{false, note});
  }
  return out + "</div>";
}

std::string GroupSection(const std::vector<Cell>& cells) {
  std::vector<Series> series;
  std::set<std::string> names;
  for (const Cell& c : cells) {
    for (const auto& [g, ios] : c.groups) names.insert(g);
  }
  if (names.empty()) return "";
  std::vector<std::string> groups(names.begin(), names.end());
  std::string table = "<table><tr><th class=\"l\">cell</th>";
  for (const std::string& g : groups) absl::StrAppend(&table, "<th>", Esc(g), "</th>");
  table += "</tr>";
  for (const Cell& c : cells) {
    if (c.groups.empty()) continue;
    double total = 0;
    for (const auto& [g, ios] : c.groups) total += ios;
    Series s{c.label, {}, {}};
    absl::StrAppend(&table, "<tr><td class=\"l\">", Esc(c.label), "</td>");
    for (size_t i = 0; i < groups.size(); ++i) {
      auto it = c.groups.find(groups[i]);
      const double share = it == c.groups.end() || total == 0 ? 0 : it->second / total * 100;
      s.points.emplace_back(static_cast<double>(i), share);
      absl::StrAppend(&table, "<td>", Num(share), " %</td>");
    }
    table += "</tr>";
    series.push_back(std::move(s));
  }
  table += "</table>";
  return "<h2>Per cgroup</h2><p class=\"note\">Each group's share of the cell's I/Os "
         "(cgroup.&lt;g&gt;.ios).</p>" +
         table + "<div class=\"plots\">" +
         LinePlot("groups", "Share of I/Os per group", series, Axis::Category("group", groups),
                  Axis::Linear("% of I/Os"), PlotLayout{true, ""}) +
         "</div>";
}

// Per named job: its IOPS and latency in each cell, as bars side by side and a table.
std::string JobSection(const std::vector<Cell>& cells) {
  std::vector<std::string> names;
  for (const Cell& c : cells) {
    for (const std::string& j : c.jobs) {
      if (std::find(names.begin(), names.end(), j) == names.end()) names.push_back(j);
    }
  }
  if (names.empty()) return "";
  std::string table =
      "<table><tr><th class=\"l\">cell</th><th class=\"l\">job</th><th>IOPS</th><th>share "
      "%</th><th>p50</th><th>p99</th><th>p99.9</th></tr>";
  std::vector<Series> iops, p99;
  for (const Cell& c : cells) {
    if (c.jobs.empty()) continue;
    double total = 0;
    for (const auto& [j, v] : c.job_iops) total += Mean(v);
    Series si{c.label, {}, {}}, sl{c.label, {}, {}};
    for (size_t i = 0; i < names.size(); ++i) {
      auto it = c.job_iops.find(names[i]);
      if (it == c.job_iops.end()) continue;
      const double mean = Mean(it->second);
      const LatencyHistogram& h = c.job_lat.at(names[i]);
      const v1::LatencySummary l = h.Summary();
      si.points.emplace_back(static_cast<double>(i), mean);
      sl.points.emplace_back(static_cast<double>(i), static_cast<double>(l.p99_ns()));
      absl::StrAppend(&table, "<tr><td class=\"l\">", Esc(c.label), "</td><td class=\"l\">",
                      Esc(names[i]), "</td><td>", Short(mean), "</td><td>",
                      Num(total > 0 ? mean / total * 100 : 0), "</td><td>",
                      NsText(static_cast<double>(l.p50_ns())), "</td><td>",
                      NsText(static_cast<double>(l.p99_ns())), "</td><td>",
                      NsText(static_cast<double>(l.p999_ns())), "</td></tr>");
    }
    iops.push_back(std::move(si));
    p99.push_back(std::move(sl));
  }
  table += "</table>";
  return "<h2>Per job</h2><p class=\"note\">Each named job's IOPS (mean over the cell's "
         "runs) and latency (its runs' histograms merged); the jobs of a run add up to its "
         "total.</p>" +
         table + "<div class=\"plots\">" +
         LinePlot("jobs", "IOPS per job", iops, Axis::Category("job", names),
                  Axis::Linear("IOPS")) +
         LinePlot("jobs-p99", "p99 latency per job", p99, Axis::Category("job", names),
                  Axis::Log("p99 latency", true)) +
         "</div>";
}

// Host, kernel, device and the exact queue settings, one row per distinct combination.
std::string FactsSection(const std::vector<Cell>& cells) {
  std::map<std::string, std::vector<std::string>> rows;  // row → cells
  for (const Cell& c : cells) {
    for (const v1::ResultRow* row : c.done) {
      const v1::RunResult& r = row->run().result();
      const bool sim = IsSimulated(c.spec->target().device_class());
      const std::string kernel =
          sim ? (c.spec->target().kernel().empty() ? std::string(kDefaultSimKernel)
                                                   : c.spec->target().kernel())
              : absl::StrCat(r.host().kernel_release(), " (", KernelSourceOf(*c.spec, r.device()),
                             ")");
      // A VM test host's runs: the agent's host, the VM and how it was virtualised.
      const v1::VmFacts& vm = r.device().vm();
      const std::string host =
          sim                 ? "(engine)"
          : vm.name().empty() ? r.host().hostname()
                              : absl::StrCat(r.host().hostname(), " (VM ", vm.name(), ", ",
                                             vm.accel(), ", ", vm.vcpus(), " vCPUs, ",
                                             vm.memory_mb(), " MiB, qemu ", vm.qemu_version(), ")");
      const std::string key = absl::StrCat(
          "<td class=\"l\">", Esc(host), "</td><td class=\"l\">", Esc(kernel),
          "</td><td class=\"l\">", Esc(c.spec->target().device_class()), "</td><td class=\"l\">",
          Esc(r.device().path()), " ", Esc(r.device().model()), "</td><td class=\"l\">",
          Esc(r.runner()), "</td><td class=\"l\">",
          Esc(r.applied().scheduler().empty() ? "-" : r.applied().scheduler()), "</td><td>",
          r.applied().nr_requests() ? absl::StrCat(r.applied().nr_requests()) : "-", "</td><td>",
          r.applied().max_sectors_kb() ? absl::StrCat(r.applied().max_sectors_kb()) : "-", "</td>");
      std::vector<std::string>& names = rows[key];
      if (std::find(names.begin(), names.end(), c.label) == names.end()) names.push_back(c.label);
    }
  }
  std::string out =
      "<h2>Where it ran</h2><table><tr><th class=\"l\">host</th><th class=\"l\">kernel</th>"
      "<th class=\"l\">class</th><th class=\"l\">device</th><th class=\"l\">runner</th>"
      "<th class=\"l\">scheduler</th><th>nr_requests</th><th>max_sectors_kb</th>"
      "<th class=\"l\">cells</th></tr>";
  for (const auto& [key, names] : rows) {
    absl::StrAppend(&out, "<tr>", key, "<td class=\"l\">", names.size(), " cell",
                    names.size() == 1 ? "" : "s", "</td></tr>");
  }
  absl::StrAppend(&out, "</table>");
  bool tcg = false;
  for (const Cell& c : cells) {
    for (const v1::ResultRow* row : c.done)
      tcg = tcg || VirtOf(row->run().result().device()) == "tcg";
  }
  if (tcg) absl::StrAppend(&out, "<p class=\"warn\">Some runs ", Esc(kTcgCaveat), ".</p>");
  return out;
}

}  // namespace

std::string RenderExperimentReport(const v1::GetResultsResponse& resp) {
  const v1::Experiment& e = resp.experiment();
  std::vector<Cell> cells;
  std::map<uint32_t, size_t> by_index;
  size_t done = 0, failed = 0, pending = 0;
  for (const v1::ResultRow& row : resp.rows()) {
    auto [it, fresh] = by_index.emplace(row.run().cell_index(), cells.size());
    if (fresh) {
      cells.emplace_back();
      cells.back().spec = &row.cell();
      cells.back().label = CellLabel(row.cell());
    }
    Cell& c = cells[it->second];
    const v1::Run& run = row.run();
    if (run.state() == v1::RUN_DONE) {
      ++done;
      c.done.push_back(&row);
      const v1::RunResult& r = run.result();
      c.iops.push_back(r.iops());
      c.bw.push_back(r.bw_bytes_per_sec());
      if (auto h = LatencyHistogram::FromProto(r.lat()); h.ok()) c.lat.Merge(*h);
      for (const v1::JobResult& j : r.jobs()) {
        if (!c.job_iops.count(j.name())) c.jobs.push_back(j.name());
        c.job_iops[j.name()].push_back(j.iops());
        if (auto h = LatencyHistogram::FromProto(j.lat()); h.ok()) c.job_lat[j.name()].Merge(*h);
      }
      for (const auto& [key, v] : r.internals()) {
        if (key.rfind("cgroup.", 0) == 0 && key.size() > 11 &&
            key.compare(key.size() - 4, 4, ".ios") == 0) {
          c.groups[key.substr(7, key.size() - 11)] += v;
        }
      }
    } else if (IsFinalRunState(run.state())) {
      ++failed;
      c.failed.push_back(&row);
    } else {
      ++pending;
    }
  }
  // A `blkbench sim` without --db has no experiment id.
  const std::string title = e.id() != 0 ? absl::StrCat("Experiment ", e.id(), ": ", e.name())
                                        : absl::StrCat("Simulation: ", e.name());
  std::string out = absl::StrCat(
      "<!DOCTYPE html>\n<html xmlns=\"http://www.w3.org/1999/xhtml\"><head><meta "
      "charset=\"utf-8\"/><title>blkbench: ",
      Esc(title), "</title><style>", kStyle, report::PlotsStyle(), "</style></head><body><h1>",
      Esc(title), "</h1><table><tr><th class=\"l\">state</th><td class=\"l\">",
      Esc(ExperimentStateName(e.state())),
      "</td></tr><tr><th class=\"l\">matrix</th><td class=\"l\">", Esc(e.file_name()),
      "</td></tr><tr><th class=\"l\">cells</th><td class=\"l\">", cells.size(),
      "</td></tr><tr><th class=\"l\">runs</th><td class=\"l\">", done, " done, ", failed,
      " failed or canceled, ", pending,
      " not finished</td></tr><tr><th class=\"l\">submitted</th><td "
      "class=\"l\">",
      Esc(Time(e.created_unix_ms())), " by ",
      Esc(e.submitted_by().empty() ? "-" : e.submitted_by()),
      "</td></tr><tr><th class=\"l\">finished</th><td class=\"l\">",
      Esc(Time(e.finished_unix_ms())), "</td></tr></table>");
  out += FactsSection(cells);
  out += AxesSection(cells);
  out += LatencySection(cells);
  out += TimeSeriesSection(cells);
  out += GroupSection(cells);
  out += JobSection(cells);
  bool any_failed = false;
  std::string fails =
      "<h2>Failed runs</h2><table><tr><th>run</th><th class=\"l\">cell</th><th>repeat</th><th "
      "class=\"l\">state</th><th class=\"l\">error</th></tr>";
  for (const Cell& c : cells) {
    for (const v1::ResultRow* row : c.failed) {
      any_failed = true;
      absl::StrAppend(&fails, "<tr class=\"failed\"><td>", row->run().id(), "</td><td class=\"l\">",
                      Esc(c.label), "</td><td>", row->run().repeat(), "</td><td class=\"l\">",
                      Esc(RunStateName(row->run().state())), "</td><td class=\"l\">",
                      Esc(row->run().error()), "</td></tr>");
    }
  }
  if (any_failed) out += fails + "</table>";
  absl::StrAppend(&out, "<h2>Matrix</h2><pre>", Esc(e.matrix_text()),
                  "</pre><p class=\"note\">Written by blkbench report; self-contained, no "
                  "external resources.</p></body></html>\n");
  return out;
}

}  // namespace blkbench
