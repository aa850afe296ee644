// `blkbench gate`: compares the results of two experiments (or two values of one axis)
// cell by cell and metric by metric, and renders the verdicts for terminals and CI.
// Works on GetResultsResponse protos only (no gRPC), so the CLI, `blkbench sim` results
// and the store can all feed it. Functions are thread-safe (no shared state).
#ifndef BLKBENCH_CONTROLLER_GATE_GATE_REPORT_H_
#define BLKBENCH_CONTROLLER_GATE_GATE_REPORT_H_

#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "blkbench/v1/controller.pb.h"
#include "controller/gate/gate_metrics.h"
#include "controller/gate/verdict.h"

namespace blkbench::gate {

struct GateRequest {
  // --auto-repeat: each cell pair's look, the number of rounds that added repeats to it
  // (GateOptions::look; a pair not listed is at look 0). Used when options.look >= 0.
  std::map<std::pair<uint32_t, uint32_t>, int> looks;
  // Either two experiments (axis empty: cells matched on all their axes), or one
  // experiment and an axis with two values (cells matched on every other axis).
  std::string axis;  // e.g. "kernel"
  std::string baseline_value, candidate_value;
  std::vector<std::string> metrics = {"iops", "bw", "p99", "p99.9"};  // see ParseMetric
  GateOptions options;
};

// One metric of one matched cell pair.
struct MetricComparison {
  MetricDef metric;
  // One sample per RUN_DONE run (IOPS, bytes/s or ns), in run order.
  std::vector<double> base, cand;
  // Latency metrics: the metric on each side's merged histogram (context only; the
  // verdict uses the per-run samples). NaN for throughput.
  double base_merged = std::numeric_limits<double>::quiet_NaN();
  double cand_merged = std::numeric_limits<double>::quiet_NaN();
  // The run id and repeat of each sample, in the same order as base / cand.
  std::vector<uint64_t> base_runs, cand_runs;
  std::vector<uint32_t> base_repeat_numbers, cand_repeat_numbers;
  CellVerdict verdict;  // from DecideAll, q over every cell x metric of the report
  // One line per repeat the outlier rule set aside (verdict.outliers), naming the run:
  // "run 17 (candidate, repeat 3): 7.1e+04, 31.2% below the side median ...". Every
  // renderer prints them: an outlier is reported, never silently dropped.
  std::vector<std::string> outlier_lines;
  std::string headline;  // LKP-style line for a regression or improvement, else ""
};

// What one side of a pair ran on: for the reproduction recipe.
struct SideFacts {
  uint32_t cell_index = 0;
  std::string label;                 // CellLabel of the full cell
  std::string target_kernel;         // the cell's target.kernel ("sim:6.18+patch", "6.*")
  std::vector<std::string> hosts;    // distinct result.host.hostname of done runs
  std::vector<std::string> kernels;  // distinct result.host.kernel_release of done runs
  int done_runs = 0;
  int other_runs = 0;  // runs not in RUN_DONE (failed, canceled, still running)
};

struct CellComparison {
  std::string label;  // the cell's axes except the one under test
  SideFacts base, cand;
  std::vector<MetricComparison> metrics;  // in request order
  std::string recipe;                     // "reproduce: ..." line
  // Every done run's latency histogram merged, per side (for the HTML overlays).
  LatencyHistogram base_latency, cand_latency;
};

struct UnmatchedCell {
  bool baseline = true;  // which side the cell belongs to
  uint32_t index = 0;
  std::string label;
  std::string reason;
};

struct GateCounts {
  int regressions = 0;
  int improvements = 0;
  int no_change = 0;
  int inconclusive = 0;
};

struct GateReport {
  std::string title;  // "kernel sim:6.16 -> sim:6.16+x" or "experiment 3 -> experiment 4"
  std::string axis, baseline_value, candidate_value;
  uint64_t baseline_experiment = 0, candidate_experiment = 0;
  std::string baseline_file, candidate_file;  // Experiment.file_name
  GateOptions options;
  std::vector<CellComparison> cells;  // matched pairs, in baseline cell order
  std::vector<UnmatchedCell> unmatched;
  std::vector<std::string> warnings;  // e.g. runs whose histogram could not be read
  GateCounts counts;                  // over every cell x metric
};

// Matches cells, takes one sample per RUN_DONE run and metric, and decides every
// cell x metric with DecideAll (Benjamini-Hochberg across all of them). With an axis,
// `baseline` and `candidate` may be the same response. Cells match when their axes
// (minus the one under test) are equal and their JobSpec / QueueSettings / Target /
// device parameters are equal once the axis under test is set alike; any other cell is
// listed in `unmatched` with the reason. InvalidArgument for an unknown metric, bad
// options, or an axis or value the experiments do not have.
absl::StatusOr<GateReport> CompareResults(const v1::GetResultsResponse& baseline,
                                          const v1::GetResultsResponse& candidate,
                                          const GateRequest& req);

// 1 when any cell x metric regressed; otherwise 2 when any is inconclusive or no cell
// matched at all; otherwise 0. (Callers use 2 for errors too.) Unmatched cells are
// listed but do not change the status on their own.
int ExitStatus(const GateReport& report);

// LKP-style terminal table (base centre, %stddev, %change, cand centre, %stddev,
// verdict, CI, p, q), then headlines, recipes, inconclusive cells and unmatched cells.
std::string RenderText(const GateReport& report);
// A PR comment: status line, one quoted headline + recipe per regression, the table.
std::string RenderMarkdown(const GateReport& report);
// Every field of the report as one JSON object (NaN and infinities as null).
std::string RenderJson(const GateReport& report);
// JUnit XML: one <testcase> per cell x metric; a regression is a <failure> carrying the
// numbers, an inconclusive one <skipped message=...>.
std::string RenderJUnit(const GateReport& report);
// One self-contained HTML page (no scripts, no external CSS or fonts; plots are inline
// SVG; the markup is well-formed XML): a summary table colored by verdict, each
// regression's headline and reproduction recipe, and per cell the repeats of both sides
// (dots and boxes) and the merged latency histograms overlaid.
std::string RenderHtml(const GateReport& report);

}  // namespace blkbench::gate

#endif  // BLKBENCH_CONTROLLER_GATE_GATE_REPORT_H_
