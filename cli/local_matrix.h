// Matrices as the CLI reads them: the matrix file and any machine profile files it names
// by path are read here, as the user, checked, and sent along with the matrix; nothing
// else ever opens a path from a matrix (docs/security.md).
#ifndef BLKBENCH_CLI_LOCAL_MATRIX_H_
#define BLKBENCH_CLI_LOCAL_MATRIX_H_

#include <string>

#include "absl/status/statusor.h"
#include "blkbench/v1/controller.pb.h"
#include "workloads/matrix.h"

namespace blkbench {

// ParseMatrix(text, file_name) with machine profile files read from the local disk
// (regular files only, bounded) and checked as the engine will read them.
absl::StatusOr<workloads::Matrix> ParseLocalMatrix(const std::string& text,
                                                   const std::string& file_name);

// The submission of `text` parsed as `m`: the text itself (the controller parses it
// again; it never trusts a client's parse) and the machine profile files it names.
v1::SubmitExperimentRequest SubmitRequest(const std::string& file_name, const std::string& text,
                                          const workloads::Matrix& m);

}  // namespace blkbench

#endif  // BLKBENCH_CLI_LOCAL_MATRIX_H_
