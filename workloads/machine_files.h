// Machine profile files named by path in a matrix: read once by whoever may read them
// (the CLI, as its user) and carried in the cells, so that no controller or agent ever
// opens a path that came from a matrix (docs/security.md, "Paths").
#ifndef BLKBENCH_WORKLOADS_MACHINE_FILES_H_
#define BLKBENCH_WORKLOADS_MACHINE_FILES_H_

#include <vector>

#include "workloads/bindings.h"
#include "workloads/errors.h"
#include "workloads/matrix.h"

namespace blkbench::workloads {

// Reads, through `read`, each distinct file the machine bindings name (at most
// kMaxMachineFiles of at most kMaxMachineFileBytes), records it in matrix.machine_files
// and sets target.machine_profile in every cell that uses it. Problems are reported at
// the value's place; a null `read` refuses every path.
void AttachMachineFiles(const std::vector<Binding>& bindings, const MachineFileReader& read,
                        Matrix& matrix, ErrorList& errors);

}  // namespace blkbench::workloads

#endif  // BLKBENCH_WORKLOADS_MACHINE_FILES_H_
