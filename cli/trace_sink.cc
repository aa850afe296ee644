// The --trace sink of local experiments; see trace_sink.h.
#include "cli/trace_sink.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "workloads/format.h"

namespace blkbench {

absl::StatusOr<std::unique_ptr<TraceSink>> TraceSink::OpenFile(const std::string& path) {
  auto file = std::make_unique<std::ofstream>(path);
  if (!*file) return absl::FailedPreconditionError(absl::StrCat("cannot write '", path, "'"));
  return std::unique_ptr<TraceSink>(new TraceSink(std::move(file)));
}

std::ostream* TraceSink::BeginRun(const v1::Run& run, const v1::CellSpec& cell) {
  *out_ << "# run " << run.id() << " " << workloads::CellLabel(cell) << " rep " << run.repeat()
        << "\n";
  return out_;
}

}  // namespace blkbench
