// Axis ticks and tick labels for the HTML plots (`blkbench report`, the gate's page):
// round ticks a reader can check by eye, on linear and log axes. No drawing here.
#ifndef BLKBENCH_COMMON_PLOT_AXIS_H_
#define BLKBENCH_COMMON_PLOT_AXIS_H_

#include <string>
#include <vector>

namespace blkbench::plot {

// Why this shape: a tick at max/4 ("23.4k 46.7k 70.1k 93.5k") makes the reader do the
// arithmetic the plot should have done. Heckbert's "nice numbers" (Graphics Gems, 1990)
// pick a step of 1, 2 or 5 × 10^k and widen the domain to whole steps, so every tick is a
// multiple of a round step and the data sit inside the outermost ticks. A log axis ticks
// at 1, 2 and 5 × 10^k over up to three decades, at the decades beyond that, and its
// domain ends on such a tick too, so nothing is plotted past the last label.
struct Ticks {
  double lo = 0, hi = 1;  // the domain: lo maps to one end of the plot area, hi to the other
  double step = 0;        // linear: the spacing (1, 2 or 5 × 10^k); log: 0
  bool log = false;
  std::vector<double> values;  // ascending, lo and hi included
};

// Ticks for data in [lo, hi] (any order; equal ends are widened) with at most about
// `max_ticks` ticks.
Ticks LinearTicks(double lo, double hi, int max_ticks = 6);

// Ticks for positive data in [lo, hi] on a log axis; values <= 0 are clamped to 1e-9.
Ticks LogTicks(double lo, double hi);

// Where `v` falls in the domain: 0 at lo, 1 at hi (log-spaced on a log axis).
double Fraction(const Ticks& t, double v);

// True when v is 1, 2 or 5 × 10^k for an integer k (0 is not).
bool IsNiceNumber(double v);

// A count's tick label with k/M/G ("20k", "1.5M", "0.25"). On a linear axis all labels
// share the unit of the largest end and carry the decimals the step needs, so
// neighbouring ticks never print alike; on a log axis each tick has its own unit.
std::string CountTick(double v, const Ticks& t);

// A duration's tick label (v in ns) with ns / µs / ms / s, chosen as CountTick does.
std::string DurationTick(double ns, const Ticks& t);

}  // namespace blkbench::plot

#endif  // BLKBENCH_COMMON_PLOT_AXIS_H_
