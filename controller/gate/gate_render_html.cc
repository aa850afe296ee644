// RenderHtml: the gate report as one self-contained page with inline SVG plots; see
// gate_report.h. Markup is kept well-formed XML (every element closed, attributes
// quoted, text escaped) so it can be checked by a parser and embedded anywhere.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "absl/strings/str_cat.h"
#include "controller/gate/gate_format.h"
#include "controller/gate/gate_report.h"
#include "controller/gate/robust.h"

namespace blkbench::gate {
namespace {

// Plot geometry, in SVG user units (pixels).
constexpr double kDotsWidth = 420;
constexpr double kDotsRow = 26;
constexpr double kLabelWidth = 80;
constexpr double kHistWidth = 420;
constexpr double kHistHeight = 120;
constexpr int kHistBins = 60;
constexpr char kBaseColor[] = "#3b6ea8";
constexpr char kCandColor[] = "#d9822b";

constexpr char kStyle[] = R"(
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:24px;color:#222}
h1{font-size:20px}h2{font-size:17px;margin-top:28px}h3{font-size:15px;margin:18px 0 6px}
table{border-collapse:collapse;font-size:13px}
th,td{border:1px solid #ccc;padding:3px 7px;text-align:right}
th{background:#f3f3f3}td.l{text-align:left}
tr.regression td{background:#f8d7da}tr.improvement td{background:#d4edda}
tr.no-change td{background:#fafafa}tr.inconclusive td{background:#fff3cd}
.status{font-size:15px;font-weight:600;padding:6px 10px;display:inline-block}
.s0{background:#d4edda}.s1{background:#f8d7da}.s2{background:#fff3cd}
.headline{font-weight:600}code{font-size:12px;background:#f5f5f5;padding:2px 4px}
.plots{display:flex;flex-wrap:wrap;gap:18px}.legend{font-size:12px}
.b{color:#3b6ea8}.c{color:#d9822b}
)";

std::string Esc(std::string_view s) { return XmlEscape(s); }

std::string Num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

// The verdict's name as a CSS class: "no change" -> "no-change".
std::string RowClass(Verdict v) {
  std::string name(VerdictName(v));
  std::replace(name.begin(), name.end(), ' ', '-');
  return name;
}

// One row of dots and a box (quartiles, median line) for a side's repeats.
std::string DotRow(const std::vector<double>& xs, double lo, double hi, double y, const char* color,
                   const std::string& label) {
  auto px = [&](double v) { return kLabelWidth + (v - lo) / (hi - lo) * (kDotsWidth - 10); };
  std::string out =
      absl::StrCat("<text x=\"2\" y=\"", Num(y + 4), "\" font-size=\"11\">", Esc(label), "</text>");
  if (xs.empty()) return out;
  const double q1 = Quantile(xs, 0.25), q3 = Quantile(xs, 0.75), med = Median(xs);
  absl::StrAppend(&out, "<rect x=\"", Num(px(q1)), "\" y=\"", Num(y - 8), "\" width=\"",
                  Num(std::max(1.0, px(q3) - px(q1))), "\" height=\"16\" fill=\"none\" stroke=\"",
                  color, "\"/>");
  absl::StrAppend(&out, "<line x1=\"", Num(px(med)), "\" x2=\"", Num(px(med)), "\" y1=\"",
                  Num(y - 9), "\" y2=\"", Num(y + 9), "\" stroke=\"", color,
                  "\" stroke-width=\"2\"/>");
  for (double v : xs) {
    absl::StrAppend(&out, "<circle cx=\"", Num(px(v)), "\" cy=\"", Num(y), "\" r=\"3.5\" fill=\"",
                    color, "\" fill-opacity=\"0.6\"/>");
  }
  return out;
}

// The repeats of one metric, baseline above candidate, on a shared axis.
std::string DotsSvg(const MetricComparison& m) {
  std::vector<double> all = m.base;
  all.insert(all.end(), m.cand.begin(), m.cand.end());
  const double height = 2 * kDotsRow + 22;
  std::string out = absl::StrCat(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"", Num(kDotsWidth + 10), "\" height=\"",
      Num(height), "\" role=\"img\"><title>", Esc(m.metric.name), " per repeat</title>");
  if (all.empty()) return out + "<text x=\"4\" y=\"20\">no repeats</text></svg>";
  double lo = *std::min_element(all.begin(), all.end());
  double hi = *std::max_element(all.begin(), all.end());
  const double pad = hi > lo ? 0.05 * (hi - lo) : std::max(1e-9, 0.01 * std::fabs(hi));
  lo -= pad;
  hi += pad;
  absl::StrAppend(&out, DotRow(m.base, lo, hi, 14, kBaseColor, "baseline"));
  absl::StrAppend(&out, DotRow(m.cand, lo, hi, 14 + kDotsRow, kCandColor, "candidate"));
  const double axis_y = 2 * kDotsRow + 6;
  absl::StrAppend(&out, "<line x1=\"", Num(kLabelWidth), "\" x2=\"", Num(kDotsWidth), "\" y1=\"",
                  Num(axis_y), "\" y2=\"", Num(axis_y), "\" stroke=\"#999\"/>");
  absl::StrAppend(&out, "<text x=\"", Num(kLabelWidth), "\" y=\"", Num(axis_y + 13),
                  "\" font-size=\"10\">", Esc(FormatMetricValue(m.metric, lo + pad)), "</text>");
  absl::StrAppend(&out, "<text x=\"", Num(kDotsWidth), "\" y=\"", Num(axis_y + 13),
                  "\" font-size=\"10\" text-anchor=\"end\">",
                  Esc(FormatMetricValue(m.metric, hi - pad)), "</text>");
  return out + "</svg>";
}

// Share of I/Os per log-spaced bin between lo and hi (ns).
std::vector<double> Bins(const LatencyHistogram& h, double lo, double hi) {
  std::vector<double> bins(kHistBins, 0.0);
  if (h.count() == 0) return bins;
  v1::Histogram p;
  h.ToProto(&p);
  const double span = std::log(hi) - std::log(lo);
  for (int i = 0; i < p.bucket_index_size(); ++i) {
    const double v =
        std::clamp(static_cast<double>(LatencyHistogram::BucketValue(p.bucket_index(i))), lo, hi);
    int b = static_cast<int>((std::log(v) - std::log(lo)) / span * kHistBins);
    b = std::clamp(b, 0, kHistBins - 1);
    bins[b] += static_cast<double>(p.bucket_count(i)) / static_cast<double>(h.count());
  }
  return bins;
}

std::string Steps(const std::vector<double>& bins, double top, const char* color) {
  std::string pts;
  const double w = (kHistWidth - 20) / kHistBins;
  for (int i = 0; i < kHistBins; ++i) {
    const double y = kHistHeight - 20 - bins[i] / top * (kHistHeight - 30);
    absl::StrAppend(&pts, Num(10 + i * w), ",", Num(y), " ", Num(10 + (i + 1) * w), ",", Num(y),
                    " ");
  }
  return absl::StrCat("<polyline fill=\"none\" stroke=\"", color,
                      "\" stroke-width=\"1.5\" points=\"", pts, "\"/>");
}

// Both sides' merged latency histograms as step curves on a log axis.
std::string HistogramSvg(const CellComparison& cell) {
  const LatencyHistogram& b = cell.base_latency;
  const LatencyHistogram& c = cell.cand_latency;
  if (b.count() == 0 && c.count() == 0) return "";
  double lo = 1e300, hi = 0;
  for (const LatencyHistogram* h : {&b, &c}) {
    if (h->count() == 0) continue;
    lo = std::min(lo, static_cast<double>(std::max<uint64_t>(1, h->min_ns())));
    hi = std::max(hi, static_cast<double>(std::max<uint64_t>(1, h->max_ns())));
  }
  if (!(hi > lo)) hi = lo * 1.01 + 1;
  const std::vector<double> bb = Bins(b, lo, hi), cb = Bins(c, lo, hi);
  double top = 1e-12;
  for (int i = 0; i < kHistBins; ++i) top = std::max({top, bb[i], cb[i]});
  MetricDef lat;
  lat.kind = MetricKind::kLatencyMean;
  std::string out = absl::StrCat("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"",
                                 Num(kHistWidth), "\" height=\"", Num(kHistHeight),
                                 "\" role=\"img\"><title>latency histograms (merged runs)</title>");
  absl::StrAppend(&out, "<line x1=\"10\" x2=\"", Num(kHistWidth - 10), "\" y1=\"",
                  Num(kHistHeight - 20), "\" y2=\"", Num(kHistHeight - 20), "\" stroke=\"#999\"/>");
  absl::StrAppend(&out, Steps(bb, top, kBaseColor), Steps(cb, top, kCandColor));
  absl::StrAppend(&out, "<text x=\"10\" y=\"", Num(kHistHeight - 6), "\" font-size=\"10\">",
                  Esc(FormatMetricValue(lat, lo)), "</text><text x=\"", Num(kHistWidth - 10),
                  "\" y=\"", Num(kHistHeight - 6), "\" font-size=\"10\" text-anchor=\"end\">",
                  Esc(FormatMetricValue(lat, hi)), " (log scale)</text>");
  return out + "</svg>";
}

std::string SummaryTable(const GateReport& r) {
  std::string out =
      "<table><tr><th>cell</th><th>metric</th><th>baseline</th><th>%stddev</th>"
      "<th>%change</th><th>candidate</th><th>%stddev</th><th>interval</th><th>p</th>"
      "<th>q</th><th>repeats</th><th>verdict</th></tr>";
  for (size_t i = 0; i < r.cells.size(); ++i) {
    const CellComparison& cell = r.cells[i];
    for (const MetricComparison& m : cell.metrics) {
      const CellVerdict& v = m.verdict;
      absl::StrAppend(
          &out, "<tr class=\"", RowClass(v.verdict), "\"><td class=\"l\"><a href=\"#cell", i, "\">",
          Esc(cell.label), "</a></td><td class=\"l\">", Esc(m.metric.name), "</td><td>",
          Esc(FormatMetricValue(m.metric, v.base_centre)), "</td><td>", PlainPercent(v.base_cv),
          "</td><td>", SignedPercent(v.relative_change), "</td><td>",
          Esc(FormatMetricValue(m.metric, v.cand_centre)), "</td><td>", PlainPercent(v.cand_cv),
          "</td><td>", Esc(Interval(v)), "</td><td>", PValue(v.p_value), "</td><td>",
          PValue(v.q_value), "</td><td>", v.base_repeats, " / ", v.cand_repeats,
          "</td><td class=\"l\">", Esc(VerdictCell(v)), "</td></tr>");
    }
  }
  return out + "</table>";
}

}  // namespace

std::string RenderHtml(const GateReport& r) {
  const int status = ExitStatus(r);
  const char* status_text = status == 0   ? "pass: no regression"
                            : status == 1 ? "FAIL: regression"
                                          : "inconclusive";
  std::string out = absl::StrCat(
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"/><title>",
      Esc(absl::StrCat("blkbench gate: ", r.title)), "</title><style>", kStyle,
      "</style></head><body>\n<h1>", Esc(absl::StrCat("blkbench gate: ", r.title)), "</h1>\n",
      "<p><span class=\"status s", status, "\">", status_text, " (exit ", status, ")</span> ",
      Esc(CountsLine(r)), "</p>\n<p>", Esc(MethodName(r.options.method)), " test, alpha ",
      PValue(r.options.alpha), ", min effect ", PlainPercent(r.options.min_effect),
      "; <span class=\"b\">&#9632; baseline</span> <span class=\"c\">&#9632; "
      "candidate</span></p>\n");

  bool any = false;
  for (const CellComparison& cell : r.cells) {
    for (const MetricComparison& m : cell.metrics) {
      if (m.verdict.verdict != Verdict::kRegression) continue;
      if (!any) out += "<h2>Regressions</h2>\n";
      any = true;
      absl::StrAppend(&out, "<p class=\"headline\">", Esc(m.headline), "</p><p><code>",
                      Esc(cell.recipe), "</code></p>\n");
    }
  }
  absl::StrAppend(&out, "<h2>Summary</h2>\n", SummaryTable(r), "\n");

  out += "<h2>Cells</h2>\n";
  for (size_t i = 0; i < r.cells.size(); ++i) {
    const CellComparison& cell = r.cells[i];
    absl::StrAppend(&out, "<h3 id=\"cell", i, "\">", Esc(cell.label),
                    "</h3>\n<div class=\"plots\">");
    for (const MetricComparison& m : cell.metrics) {
      absl::StrAppend(&out, "<div><div class=\"legend\">", Esc(m.metric.name), ": ",
                      Esc(VerdictCell(m.verdict)), ", ", SignedPercent(m.verdict.relative_change),
                      "</div>", DotsSvg(m), "</div>");
    }
    if (const std::string h = HistogramSvg(cell); !h.empty()) {
      absl::StrAppend(&out, "<div><div class=\"legend\">latency, all runs merged</div>", h,
                      "</div>");
    }
    absl::StrAppend(&out, "</div>\n<p><code>", Esc(cell.recipe), "</code></p>\n");
  }
  if (!r.unmatched.empty()) {
    out += "<h2>Unmatched cells</h2>\n<ul>";
    for (const UnmatchedCell& u : r.unmatched) {
      absl::StrAppend(&out, "<li>", u.baseline ? "baseline" : "candidate", " cell ", u.index, " '",
                      Esc(u.label), "': ", Esc(u.reason), "</li>");
    }
    out += "</ul>\n";
  }
  if (!r.warnings.empty()) {
    out += "<h2>Warnings</h2>\n<ul>";
    for (const std::string& w : r.warnings) absl::StrAppend(&out, "<li>", Esc(w), "</li>");
    out += "</ul>\n";
  }
  return out + "</body></html>\n";
}

}  // namespace blkbench::gate
