// The experiment lifecycle rules shared by the controller and the CLI; see
// experiment_lifecycle.h.
#include "controller/experiment_lifecycle.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/result_checks.h"

namespace blkbench {

v1::Experiment NewExperiment(const workloads::Matrix& matrix, const std::string& file_name,
                             const std::string& matrix_text, const std::string& submitted_by,
                             int64_t created_unix_ms) {
  v1::Experiment exp;
  exp.set_name(matrix.name);
  exp.set_file_name(file_name);
  exp.set_matrix_text(matrix_text);
  exp.set_repeats(matrix.repeats);
  exp.set_state(v1::EXPERIMENT_QUEUED);
  exp.set_created_unix_ms(created_unix_ms);
  exp.set_submitted_by(submitted_by);
  for (const v1::CellSpec& c : matrix.cells) *exp.add_cells() = c;
  return exp;
}

RunEnd RunEndOf(const v1::RunFinished& f) {
  RunEnd end;
  end.error = f.error();
  switch (f.outcome()) {
    case v1::RUN_OUTCOME_SUCCEEDED:
      end.state = v1::RUN_DONE;
      break;
    case v1::RUN_OUTCOME_CANCELED:
      end.state = v1::RUN_CANCELED;
      break;
    default:
      end.state = v1::RUN_FAILED;
      break;
  }
  // Done with no I/O in measured time is not a measurement.
  if (absl::Status no_io = CheckResultHasIo(f.result()); end.state == v1::RUN_DONE && !no_io.ok()) {
    end.state = v1::RUN_FAILED;
    end.error = std::string(no_io.message());
  }
  end.has_result = end.state == v1::RUN_DONE;
  return end;
}

ExperimentEnd EndOfExperiment(uint64_t runs, uint64_t failed, bool cancel_requested) {
  if (cancel_requested) return {v1::EXPERIMENT_CANCELED, ""};
  if (failed > 0)
    return {v1::EXPERIMENT_FAILED, absl::StrCat(failed, " of ", runs, " runs failed")};
  return {v1::EXPERIMENT_DONE, ""};
}

}  // namespace blkbench
