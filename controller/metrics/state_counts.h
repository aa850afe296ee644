// Counting runs and experiments by state from the Store, for the blkbench_runs and
// blkbench_experiments gauges. Called periodically by the server's ticker.
#ifndef BLKBENCH_CONTROLLER_METRICS_STATE_COUNTS_H_
#define BLKBENCH_CONTROLLER_METRICS_STATE_COUNTS_H_

#include "absl/status/statusor.h"
#include "controller/metrics/observer.h"
#include "controller/store/store.h"

namespace blkbench {

// Every run and experiment in `store`, counted by state. Every state of both enums
// (except UNSPECIFIED) is present in the result, with 0 when nothing is in it. Errors
// are the store's. Reads every run row: call it every few seconds, not per sample.
absl::StatusOr<StateCounts> CountStates(Store& store);

}  // namespace blkbench

#endif  // BLKBENCH_CONTROLLER_METRICS_STATE_COUNTS_H_
