// The gate page's plots; see gate_plots.h. Markup is well-formed XML.
#include "controller/gate/gate_plots.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/plot_axis.h"
#include "controller/gate/gate_format.h"
#include "controller/gate/robust.h"

namespace blkbench::gate {
namespace {

// Geometry in SVG user units; about a pixel each on a 1400 px window (two columns).
constexpr double kHalfWidth = 660, kWideWidth = 1336;
constexpr double kLabelWidth = 84;  // "candidate" left of the dots' area
constexpr double kRight = 26;       // room for the last tick label's half
constexpr double kInset = 8;        // data never closer to the area's edge
constexpr double kDotsRow = 26;
constexpr double kHistHeight = 200, kHistLeft = 56, kHistTop = 10, kHistBottom = 40;
constexpr int kHistBins = 60;
constexpr char kBaseColor[] = "#3b6ea8";
constexpr char kCandColor[] = "#d9822b";
constexpr char kCandDash[] = "6 3";  // equal histograms stay tellable apart

constexpr char kPlotsStyle[] = R"(
.plots{display:grid;grid-template-columns:repeat(2,minmax(0,1fr));gap:16px;width:100%}
.plots>div{min-width:0}.plots>div.wide{grid-column:1/-1}
svg.plot{width:100%;height:auto;display:block}
)";

std::string Num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

std::string Value(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.10g", v);
  return buf;
}

// The unit a metric's axis is ticked in: round ticks of MiB/s, not of bytes/s.
struct AxisUnit {
  double div = 1;
  const char* suffix = "";
  bool ns = false;
};

AxisUnit UnitOf(const MetricDef& m, double hi) {
  if (m.IsLatency()) return {1, "", true};
  if (m.kind == MetricKind::kBandwidth) {
    constexpr double kKiB = 1024;
    if (hi >= kKiB * kKiB * kKiB) return {kKiB * kKiB * kKiB, " GiB/s", false};
    if (hi >= kKiB * kKiB) return {kKiB * kKiB, " MiB/s", false};
    return {kKiB, " KiB/s", false};
  }
  return {1, "", false};
}

std::string AxisOpen(const plot::Ticks& t) {
  return absl::StrCat("<g class=\"axis\" data-axis=\"x\" data-scale=\"", t.log ? "log" : "linear",
                      "\"", t.step > 0 ? absl::StrCat(" data-step=\"", Value(t.step), "\"") : "",
                      ">");
}

// One row of dots and a box (quartiles, median line) for a side's repeats.
template <typename Px>
std::string DotRow(const std::vector<double>& xs, Px px, double y, const char* color, int side,
                   const std::string& label) {
  std::string out =
      absl::StrCat("<text x=\"4\" y=\"", Num(y + 4), "\" font-size=\"11\">", label, "</text>");
  if (xs.empty()) return out;
  const std::string tag = absl::StrCat("data-series=\"", side, "\"");
  const double q1 = Quantile(xs, 0.25), q3 = Quantile(xs, 0.75), med = Median(xs);
  absl::StrAppend(&out, "<rect class=\"mark box\" ", tag, " x=\"", Num(px(q1)), "\" y=\"",
                  Num(y - 8), "\" width=\"", Num(std::max(1.0, px(q3) - px(q1))),
                  "\" height=\"16\" fill=\"none\" stroke=\"", color, "\"/>");
  absl::StrAppend(&out, "<line class=\"mark median\" ", tag, " x1=\"", Num(px(med)), "\" x2=\"",
                  Num(px(med)), "\" y1=\"", Num(y - 9), "\" y2=\"", Num(y + 9), "\" stroke=\"",
                  color, "\" stroke-width=\"2\"/>");
  for (double v : xs) {
    absl::StrAppend(&out, "<circle class=\"mark point\" ", tag, " cx=\"", Num(px(v)), "\" cy=\"",
                    Num(y), "\" r=\"3.5\" fill=\"", color, "\" fill-opacity=\"0.6\"/>");
  }
  return out;
}

// Share of I/Os per log-spaced bin over the axis's domain.
std::vector<double> Bins(const LatencyHistogram& h, const plot::Ticks& t) {
  std::vector<double> bins(kHistBins, 0.0);
  if (h.count() == 0) return bins;
  v1::Histogram p;
  h.ToProto(&p);
  for (int i = 0; i < p.bucket_index_size(); ++i) {
    const double v = static_cast<double>(LatencyHistogram::BucketValue(p.bucket_index(i)));
    const int b = std::clamp(static_cast<int>(plot::Fraction(t, v) * kHistBins), 0, kHistBins - 1);
    bins[b] += static_cast<double>(p.bucket_count(i)) / static_cast<double>(h.count());
  }
  return bins;
}

}  // namespace

const char* PlotsStyle() { return kPlotsStyle; }

std::string DotsSvg(const MetricComparison& m, bool wide) {
  std::vector<double> all = m.base;
  all.insert(all.end(), m.cand.begin(), m.cand.end());
  const double width = wide ? kWideWidth : kHalfWidth;
  const double area_h = 2 * kDotsRow + 8, height = area_h + 40;
  std::string out =
      absl::StrCat("<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"plot\" data-plot=\"dots:",
                   XmlEscape(m.metric.name), "\" viewBox=\"0 0 ", Num(width), " ", Num(height),
                   "\" width=\"", Num(width), "\" height=\"", Num(height),
                   "\" role=\"img\"><title>", XmlEscape(m.metric.name), " per repeat</title>");
  if (all.empty()) {  // nothing to plot: a note, not a plot
    return absl::StrCat(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"200\" height=\"30\">"
        "<text x=\"4\" y=\"20\">no repeats of ",
        XmlEscape(m.metric.name), "</text></svg>");
  }
  const double hi_raw = *std::max_element(all.begin(), all.end());
  const AxisUnit unit = UnitOf(m.metric, hi_raw);
  const plot::Ticks t = plot::LinearTicks(*std::min_element(all.begin(), all.end()) / unit.div,
                                          hi_raw / unit.div, wide ? 11 : 6);
  const double pw = width - kLabelWidth - kRight;
  auto px = [&](double v) {
    return kLabelWidth + kInset + plot::Fraction(t, v / unit.div) * (pw - 2 * kInset);
  };
  absl::StrAppend(&out, "<rect class=\"area\" x=\"", Num(kLabelWidth), "\" y=\"1\" width=\"",
                  Num(pw), "\" height=\"", Num(area_h), "\" fill=\"#fcfcfc\" stroke=\"#bbb\"/>");
  out += AxisOpen(t);
  for (double v : t.values) {
    const double x = kLabelWidth + kInset + plot::Fraction(t, v) * (pw - 2 * kInset);
    absl::StrAppend(
        &out, "<line x1=\"", Num(x), "\" x2=\"", Num(x), "\" y1=\"1\" y2=\"", Num(1 + area_h),
        "\" stroke=\"#eeeeee\"/><text class=\"tick\" data-value=\"", Value(v), "\" x=\"", Num(x),
        "\" y=\"", Num(area_h + 16), "\" font-size=\"10\" text-anchor=\"middle\">",
        XmlEscape(unit.ns ? plot::DurationTick(v, t) : plot::CountTick(v, t) + unit.suffix),
        "</text>");
  }
  absl::StrAppend(&out, "<text class=\"title\" x=\"", Num(kLabelWidth + pw / 2), "\" y=\"",
                  Num(height - 6), "\" font-size=\"11\" text-anchor=\"middle\">",
                  XmlEscape(m.metric.name), "</text></g>");
  absl::StrAppend(&out, DotRow(m.base, px, 1 + kDotsRow / 2 + 4, kBaseColor, 0, "baseline"));
  absl::StrAppend(&out, DotRow(m.cand, px, 1 + 3 * kDotsRow / 2 + 4, kCandColor, 1, "candidate"));
  return out + "</svg>";
}

std::string HistogramSvg(const CellComparison& cell, bool wide) {
  const LatencyHistogram& b = cell.base_latency;
  const LatencyHistogram& c = cell.cand_latency;
  if (b.count() == 0 && c.count() == 0) return "";
  double lo = 1e300, hi = 0;
  for (const LatencyHistogram* h : {&b, &c}) {
    if (h->count() == 0) continue;
    lo = std::min(lo, static_cast<double>(std::max<uint64_t>(1, h->min_ns())));
    hi = std::max(hi, static_cast<double>(std::max<uint64_t>(1, h->max_ns())));
  }
  const plot::Ticks xt = plot::LogTicks(lo, hi);
  const std::vector<double> bb = Bins(b, xt), cb = Bins(c, xt);
  double top = 0;
  for (int i = 0; i < kHistBins; ++i) top = std::max({top, bb[i], cb[i]});
  const plot::Ticks yt = plot::LinearTicks(0, 100 * top, 5);  // percent of I/Os
  const double width = wide ? kWideWidth : kHalfWidth;
  const double pw = width - kHistLeft - kRight, ph = kHistHeight - kHistTop - kHistBottom;
  auto X = [&](double f) { return kHistLeft + kInset + f * (pw - 2 * kInset); };
  auto Y = [&](double pct) {
    return kHistTop + kInset + (1 - plot::Fraction(yt, pct)) * (ph - 2 * kInset);
  };
  std::string out = absl::StrCat(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"plot\" data-plot=\"latency\" "
      "viewBox=\"0 0 ",
      Num(width), " ", Num(kHistHeight), "\" width=\"", Num(width), "\" height=\"",
      Num(kHistHeight),
      "\" font-size=\"10\" role=\"img\"><title>latency histograms (merged "
      "runs)</title><rect class=\"area\" x=\"",
      Num(kHistLeft), "\" y=\"", Num(kHistTop), "\" width=\"", Num(pw), "\" height=\"", Num(ph),
      "\" fill=\"#fcfcfc\" stroke=\"#bbb\"/>");
  absl::StrAppend(&out, "<g class=\"axis\" data-axis=\"y\" data-scale=\"linear\" data-step=\"",
                  Value(yt.step), "\">");
  for (double v : yt.values) {
    absl::StrAppend(&out, "<line x1=\"", Num(kHistLeft), "\" x2=\"", Num(kHistLeft + pw),
                    "\" y1=\"", Num(Y(v)), "\" y2=\"", Num(Y(v)),
                    "\" stroke=\"#e6e6e6\"/><text class=\"tick\" data-value=\"", Value(v),
                    "\" x=\"", Num(kHistLeft - 5), "\" y=\"", Num(Y(v) + 4),
                    "\" text-anchor=\"end\">", plot::CountTick(v, yt), " %</text>");
  }
  out += "</g>" + AxisOpen(xt);
  for (double v : xt.values) {
    const double x = X(plot::Fraction(xt, v));
    absl::StrAppend(&out, "<line x1=\"", Num(x), "\" x2=\"", Num(x), "\" y1=\"", Num(kHistTop),
                    "\" y2=\"", Num(kHistTop + ph),
                    "\" stroke=\"#eeeeee\"/><text class=\"tick\" "
                    "data-value=\"",
                    Value(v), "\" x=\"", Num(x), "\" y=\"", Num(kHistTop + ph + 14),
                    "\" text-anchor=\"middle\">", XmlEscape(plot::DurationTick(v, xt)), "</text>");
  }
  absl::StrAppend(&out, "<text class=\"title\" x=\"", Num(kHistLeft + pw / 2), "\" y=\"",
                  Num(kHistHeight - 6),
                  "\" font-size=\"11\" text-anchor=\"middle\">latency (log scale), share of "
                  "I/Os per bin</text></g>");
  int side = 0;
  for (const auto* bins : {&bb, &cb}) {
    std::string pts;
    for (int i = 0; i < kHistBins; ++i) {
      const double y = Y(100 * (*bins)[i]);
      absl::StrAppend(&pts, Num(X(static_cast<double>(i) / kHistBins)), ",", Num(y), " ",
                      Num(X(static_cast<double>(i + 1) / kHistBins)), ",", Num(y), " ");
    }
    absl::StrAppend(&out, "<polyline class=\"line\" data-series=\"", side, "\" fill=\"none\" ",
                    "stroke=\"", side == 0 ? kBaseColor : kCandColor, "\"",
                    side == 0 ? "" : absl::StrCat(" stroke-dasharray=\"", kCandDash, "\""),
                    " stroke-width=\"1.5\" points=\"", pts, "\"/>");
    ++side;
  }
  return out + "</svg>";
}

}  // namespace blkbench::gate
