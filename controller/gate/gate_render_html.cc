// RenderHtml: the gate report as one self-contained page with inline SVG plots; see
// gate_report.h. Markup is kept well-formed XML (every element closed, attributes
// quoted, text escaped) so it can be checked by a parser and embedded anywhere.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "controller/gate/gate_format.h"
#include "controller/gate/gate_plots.h"
#include "controller/gate/gate_report.h"

namespace blkbench::gate {
namespace {

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
.legend{font-size:12px}
.b{color:#3b6ea8}.c{color:#d9822b}
)";

std::string Esc(std::string_view s) { return XmlEscape(s); }

// The verdict's name as a CSS class: "no change" -> "no-change".
std::string RowClass(Verdict v) {
  std::string name(VerdictName(v));
  std::replace(name.begin(), name.end(), ' ', '-');
  return name;
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
      Esc(absl::StrCat("blkbench gate: ", r.title)), "</title><style>", kStyle, PlotsStyle(),
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
    // Two plots to a row; an odd last one takes the row.
    const std::string hist = HistogramSvg(cell, cell.metrics.size() % 2 == 0);
    const size_t plots = cell.metrics.size() + (hist.empty() ? 0 : 1);
    for (size_t k = 0; k < cell.metrics.size(); ++k) {
      const MetricComparison& m = cell.metrics[k];
      const bool wide = k + 1 == plots && plots % 2 == 1;
      absl::StrAppend(&out, wide ? "<div class=\"wide\">" : "<div>", "<div class=\"legend\">",
                      Esc(m.metric.name), ": ", Esc(VerdictCell(m.verdict)), ", ",
                      SignedPercent(m.verdict.relative_change), "</div>", DotsSvg(m, wide),
                      "</div>");
    }
    if (!hist.empty()) {
      absl::StrAppend(&out, plots % 2 == 1 ? "<div class=\"wide\">" : "<div>",
                      "<div class=\"legend\">latency, all runs merged (candidate dashed)</div>",
                      hist, "</div>");
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
