// Predicates on run and experiment states, shared by controller, store and CLI.
#ifndef BLKBENCH_COMMON_STATES_H_
#define BLKBENCH_COMMON_STATES_H_

#include "blkbench/v1/controller.pb.h"

namespace blkbench {

// DONE, FAILED and CANCELED never change again (for that attempt).
inline bool IsFinalRunState(v1::RunState s) {
  return s == v1::RUN_DONE || s == v1::RUN_FAILED || s == v1::RUN_CANCELED;
}

// Sent to an agent and not yet final.
inline bool IsActiveRunState(v1::RunState s) {
  return s == v1::RUN_ASSIGNED || s == v1::RUN_RUNNING;
}

inline bool IsEndedExperimentState(v1::ExperimentState s) {
  return s == v1::EXPERIMENT_DONE || s == v1::EXPERIMENT_FAILED || s == v1::EXPERIMENT_CANCELED;
}

}  // namespace blkbench

#endif  // BLKBENCH_COMMON_STATES_H_
