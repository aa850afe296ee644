// Machine profile files named by path (machine_files.h): local reads for the CLI,
// attachments for the controller, and their carriage into cells.
#include "workloads/machine_files.h"

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/bounded_file.h"
#include "common/sim_vocabulary.h"

namespace blkbench::workloads {

absl::StatusOr<std::string> ReadLocalMachineFile(const std::string& path) {
  return ReadBoundedRegularFile(path, kMaxMachineFileBytes, "machine profile");
}

MachineFileReader AttachedMachineFiles(std::map<std::string, std::string> files) {
  return [files = std::move(files)](const std::string& path) -> absl::StatusOr<std::string> {
    auto it = files.find(path);
    if (it == files.end()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "machine profile file '", path,
          "' was not sent with the matrix; `blkbench submit` reads such files and sends "
          "them along (the controller and agents never open a path from a matrix)"));
    }
    return it->second;
  };
}

void AttachMachineFiles(const std::vector<Binding>& bindings, const MachineFileReader& read,
                        Matrix& matrix, ErrorList& errors) {
  for (const Binding& b : bindings) {
    if (b.def->canonical != "machine" || !b.valid) continue;
    for (const Value& v : b.values) {
      if (!IsMachineProfilePath(v.text) || matrix.machine_files.count(v.text) > 0) continue;
      if (!read) {
        errors.Add(v.pos, absl::StrCat("key 'machine': '", v.text,
                                       "' is a file path, which is read only by the blkbench "
                                       "CLI and sent with the matrix"));
        continue;
      }
      if (matrix.machine_files.size() == kMaxMachineFiles) {
        errors.Add(v.pos, absl::StrCat("key 'machine': more than ", kMaxMachineFiles,
                                       " machine profile files"));
        continue;
      }
      absl::StatusOr<std::string> text = read(v.text);
      if (!text.ok()) {
        errors.Add(v.pos, absl::StrCat("key 'machine': ", text.status().message()));
      } else if (text->size() > kMaxMachineFileBytes) {
        errors.Add(v.pos, absl::StrCat("key 'machine': '", v.text, "' is larger than ",
                                       kMaxMachineFileBytes, " bytes"));
      } else {
        matrix.machine_files[v.text] = *std::move(text);
      }
    }
  }
  for (v1::CellSpec& cell : matrix.cells) {
    auto it = matrix.machine_files.find(cell.target().machine());
    if (it != matrix.machine_files.end()) cell.mutable_target()->set_machine_profile(it->second);
  }
}

}  // namespace blkbench::workloads
