// Everything a Store holds, read through the Store interface, and copying it from one
// store to another: `blkbench-controller migrate --from sqlite:FILE --to postgresql://…`.
#ifndef BLKBENCH_CONTROLLER_STORE_STORE_COPY_H_
#define BLKBENCH_CONTROLLER_STORE_STORE_COPY_H_

#include <cstdint>
#include <map>
#include <vector>

#include "absl/status/statusor.h"
#include "blkbench/v1/controller.pb.h"
#include "blkbench/v1/metrics.pb.h"
#include "controller/store/store.h"

namespace blkbench {

// What the Store interface shows: each run's current attempt, its samples and result.
// Samples and results of earlier attempts are superseded (GetRun never shows them) and
// are not part of it.
struct StoreContents {
  // Oldest first, with cells, matrix text and runs (with results).
  std::vector<v1::Experiment> experiments;
  std::map<uint64_t, std::vector<v1::Sample>> samples;  // by run id, ordered by seq
  std::vector<v1::AgentInfo> agents;
};

// Reads every experiment, run, sample and agent of `store`. Not a snapshot: stop the
// controller that writes to it first.
absl::StatusOr<StoreContents> ReadContents(Store& store);

}  // namespace blkbench

#endif  // BLKBENCH_CONTROLLER_STORE_STORE_COPY_H_
