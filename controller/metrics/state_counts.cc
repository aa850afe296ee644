// CountStates: runs and experiments by state, from the Store.
#include "controller/metrics/state_counts.h"

namespace blkbench {

absl::StatusOr<StateCounts> CountStates(Store& store) {
  StateCounts counts;
  std::vector<v1::RunState> run_states;
  for (int s = v1::RunState_MIN; s <= v1::RunState_MAX; ++s) {
    if (!v1::RunState_IsValid(s) || s == v1::RUN_STATE_UNSPECIFIED) continue;
    run_states.push_back(static_cast<v1::RunState>(s));
    counts.runs[static_cast<v1::RunState>(s)] = 0;
  }
  for (int s = v1::ExperimentState_MIN; s <= v1::ExperimentState_MAX; ++s) {
    if (!v1::ExperimentState_IsValid(s) || s == v1::EXPERIMENT_STATE_UNSPECIFIED) continue;
    counts.experiments[static_cast<v1::ExperimentState>(s)] = 0;
  }
  auto runs = store.ListRunsInStates(run_states);
  if (!runs.ok()) return runs.status();
  for (const v1::Run& run : *runs) ++counts.runs[run.state()];
  auto experiments = store.ListExperiments(0);
  if (!experiments.ok()) return experiments.status();
  for (const v1::Experiment& e : *experiments) ++counts.experiments[e.state()];
  return counts;
}

}  // namespace blkbench
