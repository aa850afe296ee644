// The one cell runner: repeat `repeat` of a cell on one device — the device made ready,
// the Runner, the device left as found, the result with the device's facts — for the
// agent (real and sim: devices), `blkbench sim` and `blkbench gate-proof` alike. It knows
// nothing of the controller connection, so the CLI links it without the agent.
#ifndef BLKBENCH_AGENT_CELL_CELL_RUNNER_H_
#define BLKBENCH_AGENT_CELL_CELL_RUNNER_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <ostream>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "blkbench/v1/metrics.pb.h"
#include "blkbench/v1/workload.pb.h"
#include "common/runner.h"

namespace blkbench {

// One run of a cell, as placed.
struct CellRun {
  v1::CellSpec cell;    // as stored; RunCell runs CellForRepeat(cell, repeat)
  uint32_t repeat = 0;  // which repeat: only its seed differs (common/resolved_job.h)
  std::string device;   // where it was placed: an allowlisted path or a sim: class
  std::string name;     // unique per run attempt ("run-12-1"); names its cgroups
  std::chrono::nanoseconds sample_interval = std::chrono::seconds(1);
  std::function<void(const v1::Sample&)> on_sample;  // as RunContext::on_sample; may be empty
  const std::atomic<bool>* cancel = nullptr;         // as RunContext::cancel
  std::ostream* trace = nullptr;                     // as RunContext::trace
};

// A device made ready for one run.
struct PreparedDevice {
  // What the runner does I/O on: a real device's resolved node or file, a sim: class.
  std::string io_path;
  // The device as the run found it, attached to the result. The runner's target size
  // and logical block size are its size_bytes and logical_block_size (512 if unset).
  v1::DeviceFacts facts;
  // The queue settings in effect during the run, attached to the result.
  v1::QueueSettings applied;
  // Puts a job in its cgroup before its first I/O (RunContext::place_job); empty when
  // the jobs stay where they are (root layout, simulated devices).
  std::function<absl::Status(uint32_t job, int tid)> place_job;
  // Adds what the device recorded during the run (its own counters) to a successful
  // result, before Release; empty when there is nothing (simulated devices, files).
  std::function<void(v1::RunResult& result)> annotate;
  // Adds what the device recorded during one sample interval (its counter deltas,
  // Sample.device) to each sample before it reaches CellRun::on_sample; called from the
  // runner's thread, once per sample, in order. Empty when there is nothing.
  std::function<void(v1::Sample& sample)> annotate_sample;
};

// How a device is made ready for a run and left as found after it: nothing for a
// simulated device (SimulatedDevicePreparation), wrong-disk checks, the exclusive
// hold, journaled queue settings and cgroups for a real one (agent/real_device.h).
// One object serves one run: Prepare once, then Release once if Prepare succeeded.
class DevicePreparation {
 public:
  virtual ~DevicePreparation() = default;

  // Makes run.device ready for run.cell. On failure nothing is left changed and the
  // error says why (a refused device's message starts with "refused: "); never
  // Cancelled.
  virtual absl::StatusOr<PreparedDevice> Prepare(const CellRun& run) = 0;

  // Undoes what Prepare did, in reverse order, after the runner returned — whatever it
  // returned. The error names every step that could not be undone.
  virtual absl::Status Release() = 0;
};

// Runs `run` on `runner` with `device`: Prepare, the Runner on
// CellForRepeat(run.cell, run.repeat) against the prepared target, Release. On success
// the runner's result with device = the prepared facts and applied = the prepared queue
// settings (host facts are the caller's). Errors: Prepare's error; the runner's error
// (Cancelled when run.cancel was set) with "; <release error>" appended if Release failed
// too; Internal "run completed but leaving the host as found failed: ..." when only
// Release failed.
absl::StatusOr<v1::RunResult> RunCell(const CellRun& run, DevicePreparation& device,
                                      Runner& runner);

}  // namespace blkbench

#endif  // BLKBENCH_AGENT_CELL_CELL_RUNNER_H_
