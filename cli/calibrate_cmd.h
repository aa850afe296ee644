// `blkbench calibrate PATH`: a short QD x block size x read/write sweep on a real device,
// through `blkbench run`'s path and safety checks, fitted (engine/device/ssd_fit.h) into
// the engine's `sim:ssd` twin of the device, written as a matrix fragment whose comment
// carries the twin's error on every swept cell.
#ifndef BLKBENCH_CLI_CALIBRATE_CMD_H_
#define BLKBENCH_CLI_CALIBRATE_CMD_H_

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "cli/run_cmd.h"
#include "engine/device/ssd_fit.h"

namespace blkbench {

// 12 cells x kCalibrateRepeats runs of kDefaultCalibrateRuntimeMs plus a fifth of ramp:
// about 45 s in all.
inline constexpr uint32_t kCalibrateRepeats = 3;
inline constexpr uint32_t kDefaultCalibrateRuntimeMs = 1'000;

struct CalibrateOptions {
  std::string device;    // PATH: the one device it may touch (it writes to it)
  std::string out_path;  // the preset; "" = blkbench-twin-<kernel name>.yaml here
  uint32_t runtime_ms = kDefaultCalibrateRuntimeMs;
  std::string state_dir = kDefaultRunStateDir;
  std::string db_path;  // non-empty: the sweep is also stored there, as `run --db` stores
  bool quiet = false;   // no progress lines
};

// The engine's twin of a device: the fit plus what the device reports of itself.
struct SsdTwin {
  engine::SsdFitParams fit;
  uint32_t queue_depth = 0;  // the device's tag depth (nr_requests under none)
  uint32_t hw_queues = 1;
  std::string machine;  // the engine machine profile standing for this host
};

// The sweep every calibration runs: rw {randread, randwrite} x bs {4k, 64k, 256k} x
// iodepth {1, 32}, one job, scheduler none, direct io_uring, kCalibrateRepeats runs of
// `runtime_ms` after a ramp of a fifth of it, ending in `target` (the YAML of the
// `target:` and `device:` keys). Calibrate fits the median of each cell's runs.
std::string CalibrationMatrixText(const std::string& name, uint32_t runtime_ms,
                                  const std::string& target);

// `target:` and `device:` of the twin: sim:ssd with the fitted parameters, the rest of the
// model switched off (no dies, no program cap) so that only what was fitted acts.
std::string TwinTargetYaml(const SsdTwin& twin);

// The smallest shipped machine profile with at least `cpus` CPUs (else the largest).
std::string TwinMachine(int cpus);

// Sweeps the device, fits, writes the preset and prints the sweep with the twin's error
// on `out`. Before anything runs, the device passes `blkbench run`'s checks (root,
// allowlist of one, not mounted or in use, no signature, held O_EXCL; its settings are
// restored after each run); a refusal, a failed run or a sweep that cannot be fitted
// writes no preset. 0 on success, 1 otherwise, 2 for bad arguments.
int RunCalibrate(const CalibrateOptions& options, std::ostream& out, std::ostream& err);

}  // namespace blkbench

#endif  // BLKBENCH_CLI_CALIBRATE_CMD_H_
