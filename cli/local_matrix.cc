// ParseLocalMatrix and SubmitRequest (local_matrix.h).
#include "cli/local_matrix.h"

#include <string>

#include "engine/sim/machine_profile.h"

namespace blkbench {

absl::StatusOr<workloads::Matrix> ParseLocalMatrix(const std::string& text,
                                                   const std::string& file_name) {
  const workloads::ParseOptions options{
      .read_machine_file = [](const std::string& path) -> absl::StatusOr<std::string> {
        absl::StatusOr<std::string> yaml = workloads::ReadLocalMachineFile(path);
        if (!yaml.ok()) return yaml.status();
        if (absl::StatusOr<engine::MachineProfile> p = engine::ParseMachineProfile(*yaml, path);
            !p.ok()) {
          return p.status();
        }
        return yaml;
      }};
  return workloads::ParseMatrix(text, file_name, options);
}

v1::SubmitExperimentRequest SubmitRequest(const std::string& file_name, const std::string& text,
                                          const workloads::Matrix& m) {
  v1::SubmitExperimentRequest req;
  req.set_file_name(file_name);
  req.set_matrix_text(text);
  for (const auto& [path, yaml] : m.machine_files) (*req.mutable_machine_files())[path] = yaml;
  return req;
}

}  // namespace blkbench
