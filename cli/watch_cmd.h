// `blkbench watch` (and `submit --watch`): an experiment's progress as a live frame on a
// terminal, as one line per run state change plus a periodic summary in logs and CI
// (`--progress plain`), or not at all (`--progress none`).
#ifndef BLKBENCH_CLI_WATCH_CMD_H_
#define BLKBENCH_CLI_WATCH_CMD_H_

#include <cstdint>
#include <ostream>
#include <string>

#include "absl/time/time.h"
#include "cli/cli_common.h"

namespace blkbench {

// Estimates the wall time left from the runs that ended while watching (their rate since
// the watch began), and before any has ended from the runs' configured time. It moves:
// every call recomputes it from the clock.
class EtaEstimator {
 public:
  explicit EtaEstimator(absl::Time start) : start_(start) {}
  // "~3m20s", or "" when there is nothing to go on. `job_ms` is a run's runtime+ramp.
  std::string Eta(absl::Time now, uint32_t ended, uint32_t active, uint32_t total, int64_t job_ms);

 private:
  absl::Time start_;
  int64_t ended_at_start_ = -1;
};

// Follows experiment `id` until it ends. `progress` is "auto" (live on a terminal, plain
// otherwise), "live", "plain" or "none". Exit 0 when it ended DONE, 1 otherwise.
int WatchExperiment(Client& c, uint64_t id, const std::string& progress, std::ostream& out,
                    std::ostream& err);

}  // namespace blkbench

#endif  // BLKBENCH_CLI_WATCH_CMD_H_
