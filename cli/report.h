// `blkbench report EXP`: one experiment as a self-contained HTML page (inline CSS and
// SVG, no external links, like the gate's report) — the plots people would rather look
// at than read: the main metric against each axis, latency percentiles and CDFs from the
// merged histograms, per-interval time series, per-group bars, and the host, kernel,
// device and exact queue settings each run had. docs/report.md.
#ifndef BLKBENCH_CLI_REPORT_H_
#define BLKBENCH_CLI_REPORT_H_

#include <string>

#include "blkbench/v1/controller.pb.h"

namespace blkbench {

// The report of `resp` (GetResults with samples). Every plot is an <svg class="plot">
// with a data-plot attribute naming it ("axis:iodepth", "percentiles", "cdf",
// "timeseries", "groups"), so tests and scripts can find them.
std::string RenderExperimentReport(const v1::GetResultsResponse& resp);

}  // namespace blkbench

#endif  // BLKBENCH_CLI_REPORT_H_
