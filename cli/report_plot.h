// The experiment report's one chart type: lines with markers (and whiskers) on linear,
// log or categorical axes, as inline SVG that a reader can trust — round ticks
// (common/plot_axis.h), log axes labelled as such, every series visible, nothing drawn
// past the plot area, sized to share the page's full width. docs/report.md.
#ifndef BLKBENCH_CLI_REPORT_PLOT_H_
#define BLKBENCH_CLI_REPORT_PLOT_H_

#include <string>
#include <utility>
#include <vector>

namespace blkbench::report {

// One line: points (x, y) in data units, in x order.
struct Series {
  std::string name;
  std::vector<std::pair<double, double>> points;
  std::vector<std::pair<double, double>> range;  // min, max of y at each point (whiskers)
};

struct Axis {
  enum class Scale { kLinear, kLog, kCategory };
  std::string title;
  Scale scale = Scale::kLinear;
  std::vector<std::string> categories;  // kCategory: the labels at x = 0, 1, ...
  bool ns = false;                      // values are durations in ns
  bool from_zero = true;                // a linear axis includes 0

  static Axis Linear(std::string title, bool ns = false) {
    return Axis{std::move(title), Scale::kLinear, {}, ns, true};
  }
  static Axis Log(std::string title, bool ns = false) {
    return Axis{std::move(title), Scale::kLog, {}, ns, false};
  }
  static Axis Category(std::string title, std::vector<std::string> categories) {
    return Axis{std::move(title), Scale::kCategory, std::move(categories), false, false};
  }
};

// Plots sit two to a row in a <div class="plots"> (PlotsStyle); a wide plot takes a row.
struct PlotLayout {
  bool wide = false;
  std::string note;  // said under the legend (what was dropped, and why)
};

// A <figure> holding <svg class="plot" data-plot="ID"> and its legend. In the SVG: the
// plot area is the <rect class="area">; each axis a <g class="axis" data-axis="x|y"
// data-scale="linear|log|category" data-step="…"> of <text class="tick"
// data-value="…">; every line, whisker and marker carries data-series="i" (marker
// elements also class "mark"); the legend has one <span class="key" data-series="i">
// per drawn series, showing its colour, dash and marker. At most 12 series are drawn;
// the rest are counted in the legend. Series on a categorical x axis are dodged
// sideways so that equal values stay visible.
std::string LinePlot(const std::string& id, const std::string& caption,
                     const std::vector<Series>& all, const Axis& x, const Axis& y,
                     const PlotLayout& layout = {});

// The CSS the plots need (the grid of .plots, responsive SVG, legend keys).
const char* PlotsStyle();

}  // namespace blkbench::report

#endif  // BLKBENCH_CLI_REPORT_PLOT_H_
