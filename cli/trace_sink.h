// Where `--trace FILE` of `blkbench sim` and `blkbench run` goes: one sink per
// experiment, opened once by the local session, each run's block events (blkparse text,
// common/blktrace.h) after a "# run ID AXES rep N" line that says whose they are.
#ifndef BLKBENCH_CLI_TRACE_SINK_H_
#define BLKBENCH_CLI_TRACE_SINK_H_

#include <fstream>
#include <memory>
#include <ostream>
#include <string>

#include "absl/status/statusor.h"
#include "blkbench/v1/controller.pb.h"

namespace blkbench {

// Not thread-safe: runs go one at a time.
class TraceSink {
 public:
  // A sink writing to the file `path` (created or truncated). FailedPrecondition
  // "cannot write 'PATH'" when it cannot be opened.
  static absl::StatusOr<std::unique_ptr<TraceSink>> OpenFile(const std::string& path);
  // A sink writing to `out`, which must outlive it.
  explicit TraceSink(std::ostream& out) : out_(&out) {}

  TraceSink(const TraceSink&) = delete;
  TraceSink& operator=(const TraceSink&) = delete;

  // Starts the section of `run` of `cell`: writes its header and returns the stream the
  // run's events go to (what RunContext::trace takes), valid until the sink is destroyed.
  std::ostream* BeginRun(const v1::Run& run, const v1::CellSpec& cell);

 private:
  explicit TraceSink(std::unique_ptr<std::ofstream> file)
      : file_(std::move(file)), out_(file_.get()) {}

  std::unique_ptr<std::ofstream> file_;  // null for a sink over a caller's stream
  std::ostream* out_;
};

}  // namespace blkbench

#endif  // BLKBENCH_CLI_TRACE_SINK_H_
