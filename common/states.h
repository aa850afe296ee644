// Predicates on run and experiment states, shared by controller, store and CLI.
#ifndef BLKBENCH_COMMON_STATES_H_
#define BLKBENCH_COMMON_STATES_H_

#include <string>

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

// "done", "running", ...: the state's enum name without its prefix, in lower case.
inline std::string RunStateName(v1::RunState s) {
  std::string name = v1::RunState_Name(s);
  if (name.rfind("RUN_", 0) == 0) name = name.substr(4);
  for (char& c : name) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  return name;
}

// "done", "running", "failed", ...
inline std::string ExperimentStateName(v1::ExperimentState s) {
  std::string name = v1::ExperimentState_Name(s);
  if (name.rfind("EXPERIMENT_", 0) == 0) name = name.substr(11);
  for (char& c : name) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  return name;
}

}  // namespace blkbench

#endif  // BLKBENCH_COMMON_STATES_H_
