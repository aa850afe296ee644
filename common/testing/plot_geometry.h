// Test helper: loads an HTML page with the report's or the gate's plots in headless
// Chromium at a given window width and measures them (getBoundingClientRect,
// elementFromPoint) with a small script injected into a copy of the page: round ticks,
// labels inside the plot and the page, log axes labelled, marks inside the plot area,
// every series visible, the plots' rows using the page's width.
#ifndef BLKBENCH_COMMON_TESTING_PLOT_GEOMETRY_H_
#define BLKBENCH_COMMON_TESTING_PLOT_GEOMETRY_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace blkbench::testing {

struct PlotGeometry {
  int plots = 0;  // svg.plot elements measured
  int ticks = 0;  // tick labels checked
  int marks = 0;  // points, boxes, whiskers and lines checked against their plot area
  int series = 0;
  int log_axes = 0;
  double min_row_share = 1;  // the narrowest row of plots, as a share of the window width
  // What failed, one line each ("cdf: tick 20 ms outside the svg"); empty when all holds.
  std::vector<std::string> problems;
  // Per time-series plot ("timeseries", "device-util", …) and series: the y pixel of each
  // point marker, in x order — a spike shows as one value far from the rest.
  std::map<std::string, std::vector<std::vector<double>>> point_ys;
};

// Whether `chromium` runs here (scripts/deps.sh installs it).
bool HaveChromium();

// Measures the plots of the page at `html_path` in a `width` x 1000 px window; `scratch`
// is a directory for the instrumented copy and Chromium's profile. Errors when Chromium
// fails or the script's result is missing. With BLKBENCH_PLOT_SCREENSHOTS=DIR in the
// environment it also writes DIR/<test name>.png, the page at `width` x 5000 px, to look at, and
// the page beside it.
absl::StatusOr<PlotGeometry> MeasurePlots(const std::string& html_path, int width,
                                          const std::string& scratch);

}  // namespace blkbench::testing

#endif  // BLKBENCH_COMMON_TESTING_PLOT_GEOMETRY_H_
