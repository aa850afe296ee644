// `blkbench gate-proof` noise models (controller/gate/noise_model.h) chosen on the command
// line, the per-model table of docs/gating.md (the gate against LKP's and mmtests' rules,
// with and without --auto-repeat), and --fit, which fits a model from repeated runs.
#ifndef BLKBENCH_CLI_GATE_PROOF_MODELS_H_
#define BLKBENCH_CLI_GATE_PROOF_MODELS_H_

#include <optional>
#include <ostream>
#include <string>

#include "absl/status/statusor.h"
#include "cli/cli_common.h"
#include "controller/gate/noise_model.h"

namespace blkbench {

// The --auto-repeat budget the tables use (extra repeats per side, so at most 45).
inline constexpr int kProofAutoRepeat = 40;

// The model the flags --outliers, --cv-ratio, --cv-spread, --tails, --drift and --fitted
// describe (they combine); nullopt when none is given; InvalidArgument for a bad value.
absl::StatusOr<std::optional<gate::NoiseModel>> NoiseModelFromFlags(const Args& a);

// One model's report (--repeats, --cv, --change, --auto-repeat, --method, --trials):
// per-cell false alarms, power per cell and through Benjamini-Hochberg, LKP's and
// mmtests' rules on the same repeats, and with --auto-repeat the power, false alarms and
// repeats spent. 0 on success, 2 on a bad flag (said on err).
int RunModelReport(const Args& a, const gate::NoiseModel& model, std::ostream& out,
                   std::ostream& err);

// The docs table: every model of the issue at 5 repeats, 2 % CV, -5 %; `trials`
// experiments of 20 cells per entry, auto-repeat entries with trials / 4.
std::string NoiseModelTables(int trials);

// --fit CSV: reads rows "cell,repeat,run,iops" (header first), fits FitNoiseModel over
// the cells and prints the model and its residuals as the body of
// controller/gate/fitted_loop_shm.inc. 0 on success, 1 when the file cannot be read.
int RunFit(const std::string& path, std::ostream& out, std::ostream& err);

}  // namespace blkbench

#endif  // BLKBENCH_CLI_GATE_PROOF_MODELS_H_
