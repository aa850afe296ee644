// The gate page's plots (RenderHtml): each metric's repeats per side as dots over a box,
// and both sides' merged latency histograms on a log axis. Inline SVG with round ticks
// (common/plot_axis.h), everything inside its plot area, sized to the page's two-column
// grid. The class names are the report's (cli/report_plot.h) so one check reads both.
#ifndef BLKBENCH_CONTROLLER_GATE_GATE_PLOTS_H_
#define BLKBENCH_CONTROLLER_GATE_GATE_PLOTS_H_

#include <string>

#include "controller/gate/gate_report.h"

namespace blkbench::gate {

// The repeats of one metric, baseline above candidate, on a shared axis; a wide plot
// takes a whole row of the grid.
std::string DotsSvg(const MetricComparison& m, bool wide);

// Both sides' merged latency histograms as step curves (share of I/Os per log-spaced
// bin), or "" when neither side has latency.
std::string HistogramSvg(const CellComparison& cell, bool wide);

// The CSS of the grid the plots sit in (<div class="plots">, a wide one <div class="wide">).
const char* PlotsStyle();

}  // namespace blkbench::gate

#endif  // BLKBENCH_CONTROLLER_GATE_GATE_PLOTS_H_
