// LinePlot: see report_plot.h. Markup is well-formed XML (every element closed,
// attributes quoted, text escaped), as the rest of the report is.
#include "cli/report_plot.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/plot_axis.h"
#include "controller/gate/gate_format.h"

namespace blkbench::report {
namespace {

// Geometry in SVG user units. The SVG scales to its grid column; on a 1400 px window
// (24 px page margins, two columns and a 16 px gap) a unit is about a pixel.
constexpr double kHalfWidth = 660, kWideWidth = 1336, kHeight = 300;
constexpr double kLeft = 70, kRight = 26, kTop = 12, kBottom = 46;  // around the plot area
constexpr double kInset = 8;  // data never closer to the area's edge: markers stay inside
constexpr double kMarkerR = 3.5;
constexpr double kMaxDodge = 9;     // px between neighbouring series on a category
constexpr size_t kMaxSeries = 12;   // lines per plot; the rest are named in a note
constexpr size_t kMaxMarkers = 60;  // per series; longer series are lines only
constexpr const char* kColors[] = {"#3b6ea8", "#d9822b", "#2e8b57", "#b23b3b",
                                   "#7a5195", "#8c6d31", "#1f9eb3", "#c0508b",
                                   "#5f6b6d", "#a3a82e", "#4d4dcc", "#e07b54"};
// Dash and marker cycle with different periods from each other, so two series never
// share colour, dash and marker: equal lines remain tellable apart.
constexpr const char* kDashes[] = {"", "7 3", "2 2", "9 3 2 3"};
enum class Marker { kCircle, kSquare, kTriangle, kDiamond, kCross };
constexpr Marker kMarkers[] = {Marker::kCircle, Marker::kSquare, Marker::kTriangle,
                               Marker::kDiamond, Marker::kCross};

constexpr char kPlotsStyle[] = R"(
.plots{display:grid;grid-template-columns:repeat(2,minmax(0,1fr));gap:16px;width:100%}
.plots figure.wide{grid-column:1/-1}figure{margin:0;min-width:0}
svg.plot{width:100%;height:auto;display:block}
.legend{font-size:12px;line-height:18px}.legend .key{white-space:nowrap;margin-right:12px}
.legend svg{vertical-align:middle;margin-right:3px}
)";

std::string Esc(std::string_view s) { return gate::XmlEscape(s); }

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

std::string Style(size_t si) {
  const char* dash = kDashes[si % std::size(kDashes)];
  return absl::StrCat("stroke=\"", kColors[si % std::size(kColors)], "\"",
                      *dash ? absl::StrCat(" stroke-dasharray=\"", dash, "\"") : "");
}

std::string MarkerAt(size_t si, double cx, double cy, const std::string& attrs) {
  const double r = kMarkerR;
  const char* color = kColors[si % std::size(kColors)];
  const std::string common = absl::StrCat(" fill=\"", color, "\" stroke=\"", color, "\" ", attrs);
  auto path = [&](const std::string& d) {
    return absl::StrCat("<path d=\"", d, "\"", common, "/>");
  };
  switch (kMarkers[si % std::size(kMarkers)]) {
    case Marker::kCircle:
      return absl::StrCat("<circle cx=\"", Num(cx), "\" cy=\"", Num(cy), "\" r=\"", Num(r), "\"",
                          common, "/>");
    case Marker::kSquare:
      return path(absl::StrCat("M", Num(cx - r), " ", Num(cy - r), "h", Num(2 * r), "v", Num(2 * r),
                               "h", Num(-2 * r), "z"));
    case Marker::kTriangle:
      return path(absl::StrCat("M", Num(cx), " ", Num(cy - r - 0.5), "L", Num(cx + r + 0.5), " ",
                               Num(cy + r), "L", Num(cx - r - 0.5), " ", Num(cy + r), "z"));
    case Marker::kDiamond:
      return path(absl::StrCat("M", Num(cx), " ", Num(cy - r - 0.5), "L", Num(cx + r + 0.5), " ",
                               Num(cy), "L", Num(cx), " ", Num(cy + r + 0.5), "L",
                               Num(cx - r - 0.5), " ", Num(cy), "z"));
    case Marker::kCross:
      return path(absl::StrCat("M", Num(cx - r), " ", Num(cy - r), "L", Num(cx + r), " ",
                               Num(cy + r), "M", Num(cx - r), " ", Num(cy + r), "L", Num(cx + r),
                               " ", Num(cy - r))) +
             absl::StrCat("<rect x=\"", Num(cx - r), "\" y=\"", Num(cy - r), "\" width=\"",
                          Num(2 * r), "\" height=\"", Num(2 * r),
                          "\" fill=\"#fff\" fill-opacity=\"0\" ", attrs, "/>");
  }
  return "";
}

// The axis's ticks over [lo, hi] (data units).
plot::Ticks TicksFor(const Axis& a, double lo, double hi) {
  if (a.scale == Axis::Scale::kLog) return plot::LogTicks(lo, hi);
  if (a.from_zero) {
    lo = std::min(lo, 0.0);
    hi = std::max(hi, 0.0);
  }
  return plot::LinearTicks(lo, hi);
}

std::string Title(const Axis& a) {
  return a.scale == Axis::Scale::kLog ? absl::StrCat(a.title, " (log scale)") : a.title;
}

std::string TickText(const Axis& a, const plot::Ticks& t, double v) {
  return a.ns ? plot::DurationTick(v, t) : plot::CountTick(v, t);
}

std::string AxisAttrs(const char* which, const Axis& a, const plot::Ticks& t) {
  const char* scale = a.scale == Axis::Scale::kLog        ? "log"
                      : a.scale == Axis::Scale::kCategory ? "category"
                                                          : "linear";
  return absl::StrCat("<g class=\"axis\" data-axis=\"", which, "\" data-scale=\"", scale, "\"",
                      t.step > 0 ? absl::StrCat(" data-step=\"", Value(t.step), "\"") : "", ">");
}

}  // namespace

const char* PlotsStyle() { return kPlotsStyle; }

std::string LinePlot(const std::string& id, const std::string& caption,
                     const std::vector<Series>& all, const Axis& x, const Axis& y,
                     const PlotLayout& layout) {
  const std::vector<Series> series(all.begin(), all.begin() + std::min(all.size(), kMaxSeries));
  const bool categorical = x.scale == Axis::Scale::kCategory;
  double x0 = 1e300, x1 = -1e300, y0 = 1e300, y1 = -1e300;
  for (const Series& s : series) {
    for (const auto& [px, py] : s.points) {
      x0 = std::min(x0, px);
      x1 = std::max(x1, px);
      y0 = std::min(y0, py);
      y1 = std::max(y1, py);
    }
    for (const auto& [lo, hi] : s.range) {
      y0 = std::min(y0, lo);
      y1 = std::max(y1, hi);
    }
  }
  if (x0 > x1) x0 = x1 = 0;
  if (y0 > y1) y0 = y1 = 0;
  const plot::Ticks yt = TicksFor(y, y0, y1);
  const plot::Ticks xt = categorical ? plot::Ticks{} : TicksFor(x, x0, x1);
  const double width = layout.wide ? kWideWidth : kHalfWidth;
  const double pw = width - kLeft - kRight, ph = kHeight - kTop - kBottom;
  const double iw = pw - 2 * kInset, ih = ph - 2 * kInset;
  const double ncat = static_cast<double>(std::max<size_t>(1, x.categories.size()));
  auto X = [&](double v) {
    if (categorical) return kLeft + kInset + (v + 0.5) / ncat * iw;
    return kLeft + kInset + plot::Fraction(xt, v) * iw;
  };
  auto Y = [&](double v) { return kTop + kInset + (1 - plot::Fraction(yt, v)) * ih; };
  // Equal values on a category stay visible: each series a few px aside, like a dodged
  // point plot; the offsets stay within the category's band.
  const double n = static_cast<double>(series.size());
  const double dodge = categorical ? std::min(kMaxDodge, 0.5 * iw / ncat / std::max(1.0, n)) : 0;
  auto Dodge = [&](size_t si) { return (static_cast<double>(si) - (n - 1) / 2) * dodge; };

  std::string out = absl::StrCat(
      "<figure", layout.wide ? " class=\"wide\"" : "", "><figcaption>", Esc(caption),
      "</figcaption><svg xmlns=\"http://www.w3.org/2000/svg\" class=\"plot\" data-plot=\"", Esc(id),
      "\" viewBox=\"0 0 ", Num(width), " ", Num(kHeight), "\" width=\"", Num(width), "\" height=\"",
      Num(kHeight), "\" font-size=\"11\"><rect class=\"area\" x=\"", Num(kLeft), "\" y=\"",
      Num(kTop), "\" width=\"", Num(pw), "\" height=\"", Num(ph),
      "\" fill=\"#fcfcfc\" stroke=\"#bbb\"/>");
  out += AxisAttrs("y", y, yt);
  for (double v : yt.values) {
    const double py = Y(v);
    absl::StrAppend(&out, "<line x1=\"", Num(kLeft), "\" x2=\"", Num(kLeft + pw), "\" y1=\"",
                    Num(py), "\" y2=\"", Num(py), "\" stroke=\"#e6e6e6\"/><text class=\"tick\" ",
                    "data-value=\"", Value(v), "\" x=\"", Num(kLeft - 5), "\" y=\"", Num(py + 4),
                    "\" text-anchor=\"end\">", Esc(TickText(y, yt, v)), "</text>");
  }
  out += "</g>" + AxisAttrs("x", x, xt);
  const double label_y = kTop + ph + 16;
  if (categorical) {
    for (size_t i = 0; i < x.categories.size(); ++i) {
      absl::StrAppend(&out, "<text class=\"tick\" x=\"", Num(X(static_cast<double>(i))), "\" y=\"",
                      Num(label_y), "\" text-anchor=\"middle\">", Esc(x.categories[i]), "</text>");
    }
  } else {
    for (double v : xt.values) {
      const double px = X(v);
      absl::StrAppend(&out, "<line x1=\"", Num(px), "\" x2=\"", Num(px), "\" y1=\"", Num(kTop),
                      "\" y2=\"", Num(kTop + ph), "\" stroke=\"#eeeeee\"/><text class=\"tick\" ",
                      "data-value=\"", Value(v), "\" x=\"", Num(px), "\" y=\"", Num(label_y),
                      "\" text-anchor=\"middle\">", Esc(TickText(x, xt, v)), "</text>");
    }
  }
  absl::StrAppend(&out, "<text class=\"title\" x=\"", Num(kLeft + pw / 2), "\" y=\"",
                  Num(kHeight - 8), "\" text-anchor=\"middle\">", Esc(Title(x)),
                  "</text></g><g class=\"axis-title\"><text class=\"title\" x=\"14\" y=\"",
                  Num(kTop + ph / 2), "\" text-anchor=\"middle\" transform=\"rotate(-90 14 ",
                  Num(kTop + ph / 2), ")\">", Esc(Title(y)), "</text></g>");
  // Lines and whiskers first, markers on top of every line: no line hides a marker.
  // Drawn last to first, so where series coincide the first one is on top and the ones
  // under it say in the legend whose values they share.
  std::string marks;
  for (size_t si = series.size(); si-- > 0;) {
    const Series& s = series[si];
    const std::string tag = absl::StrCat("data-series=\"", si, "\"");
    const double dx = Dodge(si);
    std::string pts;
    for (const auto& [px, py] : s.points) {
      absl::StrAppend(&pts, Num(X(px) + dx), ",", Num(Y(py)), " ");
    }
    absl::StrAppend(&out, "<polyline class=\"line\" ", tag, " fill=\"none\" ", Style(si),
                    " stroke-width=\"1.6\" points=\"", pts, "\"><title>", Esc(s.name),
                    "</title></polyline>");
    for (size_t i = 0; i < s.points.size() && i < s.range.size(); ++i) {
      const double px = X(s.points[i].first) + dx;
      absl::StrAppend(&out, "<line class=\"mark whisker\" ", tag, " x1=\"", Num(px), "\" x2=\"",
                      Num(px), "\" y1=\"", Num(Y(s.range[i].first)), "\" y2=\"",
                      Num(Y(s.range[i].second)), "\" stroke=\"", kColors[si % std::size(kColors)],
                      "\"/>");
    }
    if (s.points.size() > kMaxMarkers) continue;
    for (const auto& [px, py] : s.points) {
      absl::StrAppend(&marks, MarkerAt(si, X(px) + dx, Y(py), "class=\"mark point\" " + tag));
    }
  }
  out += marks + "</svg><div class=\"legend\">";
  for (size_t si = 0; si < series.size(); ++si) {
    std::string same;
    for (size_t e = 0; e < si && same.empty(); ++e) {
      if (series[e].points == series[si].points) same = series[e].name;
    }
    absl::StrAppend(&out, "<span class=\"key\" data-series=\"", si,
                    "\"><svg xmlns=\"http://www.w3.org/2000/svg\" width=\"36\" height=\"12\">"
                    "<line x1=\"1\" x2=\"35\" y1=\"6\" y2=\"6\" stroke-width=\"1.6\" ",
                    Style(si), "/>", MarkerAt(si, 18, 6, ""), "</svg>", Esc(series[si].name),
                    same.empty() ? "" : absl::StrCat(" (same values as ", Esc(same), ")"),
                    "</span> ");
  }
  if (all.size() > series.size()) {
    absl::StrAppend(&out, "<span class=\"note\">(", all.size() - series.size(),
                    " more not drawn)</span>");
  }
  out += "</div>";
  if (!layout.note.empty()) absl::StrAppend(&out, "<p class=\"note\">", Esc(layout.note), "</p>");
  return out + "</figure>";
}

}  // namespace blkbench::report
