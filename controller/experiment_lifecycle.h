// The rules of an experiment's life, shared by the Controller and the CLI's daemon-less
// session (cli/local_session.h): what a new experiment holds, which state an agent's
// final report puts a run in, and which state an experiment ends in. One copy of each,
// so a local `blkbench sim`/`run` experiment reads exactly as a controller's.
#ifndef BLKBENCH_CONTROLLER_EXPERIMENT_LIFECYCLE_H_
#define BLKBENCH_CONTROLLER_EXPERIMENT_LIFECYCLE_H_

#include <cstdint>
#include <string>

#include "blkbench/v1/agent.pb.h"
#include "blkbench/v1/controller.pb.h"
#include "workloads/matrix.h"

namespace blkbench {

// The experiment Store::CreateExperiment takes for `matrix`: its name, file, text,
// repeats and cells, created at `created_unix_ms` by `submitted_by`, state QUEUED.
v1::Experiment NewExperiment(const workloads::Matrix& matrix, const std::string& file_name,
                             const std::string& matrix_text, const std::string& submitted_by,
                             int64_t created_unix_ms);

// How a final report is stored: the run's state and error, and whether its result is
// kept. SUCCEEDED is RUN_DONE with the result, unless the result did no I/O in measured
// time (common/result_checks.h): that is RUN_FAILED with CheckResultHasIo's message.
// FAILED and CANCELED keep the report's error and no result.
// REQUIRES: f.outcome() is not RUN_OUTCOME_FENCED (a lost lease, not an end).
struct RunEnd {
  v1::RunState state = v1::RUN_FAILED;
  std::string error;
  bool has_result = false;
};
RunEnd RunEndOf(const v1::RunFinished& f);

// The state an experiment ends in once all `runs` are final: CANCELED when someone asked
// to cancel it, else FAILED when `failed` > 0 (error "F of N runs failed"), else DONE.
struct ExperimentEnd {
  v1::ExperimentState state = v1::EXPERIMENT_DONE;
  std::string error;
};
ExperimentEnd EndOfExperiment(uint64_t runs, uint64_t failed, bool cancel_requested);

}  // namespace blkbench

#endif  // BLKBENCH_CONTROLLER_EXPERIMENT_LIFECYCLE_H_
