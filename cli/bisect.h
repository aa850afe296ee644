// `blkbench bisect`'s search, apart from how a kernel is run: given kernels in order whose
// first is good and last is bad, find the first bad one in about log2(n) measured steps,
// each classified with the gate's statistics (controller/gate/gate_report.h) against both
// ends. Running a kernel is the caller's (cli/bisect_cmd.h: the engine for sim: kernels,
// qemu guests for deb: packages and built images), so this part is tested on synthetic
// results. Functions are thread-compatible.
#ifndef BLKBENCH_CLI_BISECT_H_
#define BLKBENCH_CLI_BISECT_H_

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "blkbench/v1/controller.pb.h"
#include "controller/gate/gate_report.h"

namespace blkbench {

// The axis every result handed to Bisect carries, its value naming the kernel the run was
// on (BisectKernelValue): the gate compares two kernels on it cell by cell.
inline constexpr char kBisectAxis[] = "kernel";

struct BisectOptions {
  std::vector<std::string> kernels;  // in order: [0] good, [n-1] bad; at least 2, distinct
  std::string metric = "iops";       // one gate metric (gate::ParseMetric)
  // Rounds of runs a kernel gets at most: the first, then one more each time the kernel
  // it is compared in leaves the step undecided. At least 1.
  int max_rounds = 3;
  gate::GateOptions gate;  // alpha, min_effect, method, min_repeats
};

// One round of runs on kernels[index]: its results, each cell carrying kBisectAxis with a
// value unique to the kernel. Round 0 is the first; a caller may return stored results
// (a resumed bisect). An error stops the bisect ("could not run").
using BisectMeasure =
    std::function<absl::StatusOr<v1::GetResultsResponse>(size_t index, int round)>;

enum class StepClass { kGood, kBad, kUndecided };

// The metric of one cell of interest on one kernel, against the two ends.
struct StepCell {
  std::string cell;           // the cell's label without the kernel axis
  double centre = 0.0;        // the kernel's median of the metric
  int runs = 0;               // its done runs
  gate::CellVerdict vs_good;  // good end -> this kernel (a regression: worse than good)
  gate::CellVerdict vs_bad;   // this kernel -> bad end (a regression: bad is worse)
};

struct BisectStep {
  size_t index = 0;
  std::string kernel;
  std::string role;  // "good end", "bad end" or "step N"
  StepClass result = StepClass::kUndecided;
  int rounds = 0;               // rounds of runs it took
  std::vector<StepCell> cells;  // one per cell of interest (for the ends: the end-to-end
                                // comparison, in vs_good of the bad end)
};

enum class BisectVerdict {
  kCulprit,       // first_bad named
  kNoRegression,  // the bad end is not worse than the good end in any cell
  kInconclusive,  // the ends, or a step, stayed undecided after max_rounds
};

struct BisectOutcome {
  BisectVerdict verdict = BisectVerdict::kInconclusive;
  std::vector<std::string> kernels;
  std::string metric;
  // kCulprit: the adjacent pair; otherwise the narrowest bracket reached (the first bad
  // kernel is one of kernels[last_good + 1 .. first_bad]).
  size_t last_good = 0, first_bad = 0;
  // The cells that regressed from the good end to the bad end (the cells of interest).
  std::vector<std::string> cells;
  // kCulprit: last good -> first bad, the gate's verdict on every cell of interest, the
  // largest change first; otherwise the good -> bad end comparison.
  std::vector<StepCell> change;
  std::vector<BisectStep> steps;  // in the order measured, ends first
  int measured_steps = 0;         // kernels measured besides the two ends
  std::string reason;             // kInconclusive / kNoRegression: why, in one sentence
};

// Runs the search; an error when `measure` fails or the results cannot be compared (an
// unknown metric, results without the axis). InvalidArgument for fewer than two kernels,
// a repeated kernel or max_rounds < 1.
absl::StatusOr<BisectOutcome> Bisect(const BisectOptions& options, const BisectMeasure& measure);

// 0 culprit found, 1 no regression between the ends, 2 inconclusive (3, could not run,
// is the caller's).
int BisectExitStatus(const BisectOutcome& outcome);

// A terminal summary: the LKP-style headline (metric, change with its interval, first bad
// and last good kernel), then the table of every step.
std::string RenderBisectText(const BisectOutcome& outcome);
// The same for a PR comment or a mail.
std::string RenderBisectMarkdown(const BisectOutcome& outcome);
// Every field as one JSON object.
std::string RenderBisectJson(const BisectOutcome& outcome);

}  // namespace blkbench

#endif  // BLKBENCH_CLI_BISECT_H_
