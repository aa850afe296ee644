// Internal to workloads/: matrix checks against the engine's vocabulary
// (common/sim_vocabulary.h) — sim: device classes, kernel profiles and patch flags,
// machine profiles and device-model parameters — so validate catches what the engine
// would refuse at run time, with the file position.
#ifndef BLKBENCH_WORKLOADS_SIM_CHECKS_H_
#define BLKBENCH_WORKLOADS_SIM_CHECKS_H_

#include <string>
#include <string_view>
#include <vector>

#include "blkbench/v1/workload.pb.h"
#include "workloads/bindings.h"
#include "workloads/errors.h"

namespace blkbench::workloads {

// The problem with one value of the key whose canonical name is `canonical`, as a
// complete message ("key 'kernel': unknown patch flag ..."), or "" when the value is
// fine or the key is not one of device_class, kernel, machine. Only sim: device
// classes and kernels are checked; real ones are free-form labels and globs.
std::string SimValueProblem(std::string_view canonical, std::string_view value);

// The problem with device-model parameter `family`.`name` = `value` (families of
// DeviceFamilies() other than null_blk, which job_options.h handles), or "".
std::string DeviceParamProblem(std::string_view family, std::string_view name,
                               std::string_view value);

// Warns, once per (kernel value, scheduler), about simulated cells whose kernel has
// patch flags none of which changes the cell's scheduler: such a cell runs as the plain
// version does. Not an error — on a real kernel the patch is built in whatever the
// scheduler, and sweeping scheduler x kernel makes such cells the controls — but worth a
// line, since `+dd-batch-dispatch` with `scheduler: bfq` alone is more likely a mistake.
// The warning points at the kernel value in `bindings`.
void WarnPatchesOutsideTheirScheduler(const std::vector<Binding>& bindings,
                                      const std::vector<v1::CellSpec>& cells, ErrorList& errors);

}  // namespace blkbench::workloads

#endif  // BLKBENCH_WORKLOADS_SIM_CHECKS_H_
