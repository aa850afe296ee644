// RunCell: prepare, run, release; see cell_runner.h.
#include "agent/cell/cell_runner.h"

#include <chrono>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/log_options.h"
#include "common/resolved_job.h"

namespace blkbench {

absl::StatusOr<v1::RunResult> RunCell(const CellRun& run, DevicePreparation& device,
                                      Runner& runner) {
  absl::StatusOr<PreparedDevice> prepared = device.Prepare(run);
  if (!prepared.ok()) return prepared.status();

  RunContext ctx;
  ctx.cell = CellForRepeat(run.cell, run.repeat);
  ctx.target_path = prepared->io_path;
  ctx.target_size = prepared->facts.size_bytes();
  ctx.logical_block_size =
      prepared->facts.logical_block_size() ? prepared->facts.logical_block_size() : 512;
  // fio log_avg_msec (or log_hist_msec): the interval its logs average over is the
  // interval of the samples (common/log_options.h).
  const uint32_t log_ms = LogSampleIntervalMs(run.cell.job());
  ctx.sample_interval = log_ms != 0 ? std::chrono::milliseconds(log_ms) : run.sample_interval;
  ctx.on_sample = run.on_sample;
  if (prepared->annotate_sample) {
    // A copy per interval (1 s): the histogram delta is a few hundred bytes.
    ctx.on_sample = [&run, &annotate = prepared->annotate_sample](const v1::Sample& s) {
      v1::Sample annotated = s;
      annotate(annotated);
      if (run.on_sample) run.on_sample(annotated);
    };
  }
  ctx.cancel = run.cancel;
  ctx.place_job = prepared->place_job;
  ctx.trace = run.trace;
  absl::StatusOr<v1::RunResult> result = runner.Run(ctx);
  if (result.ok() && prepared->annotate) prepared->annotate(*result);

  const absl::Status released = device.Release();
  if (!result.ok()) {
    if (released.ok()) return result.status();
    return absl::Status(result.status().code(),
                        absl::StrCat(result.status().message(), "; ", released.message()));
  }
  if (!released.ok()) {
    return absl::InternalError(
        absl::StrCat("run completed but leaving the host as found failed: ", released.message()));
  }
  *result->mutable_device() = std::move(prepared->facts);
  *result->mutable_applied() = std::move(prepared->applied);
  return result;
}

}  // namespace blkbench
