// libFuzzer target: the matrix parser as the controller runs it on a submission, any
// bytes as the matrix, and a machine profile file attached under one path. ParseMatrix
// must return (cells or positioned errors) within its limits, never crash or hang.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "workloads/matrix.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const blkbench::workloads::ParseOptions options{
      .read_machine_file = blkbench::workloads::AttachedMachineFiles(
          {{"lab/profile.yaml", "name: lab\ntopology: {cores: 2}\n"}})};
  const absl::StatusOr<blkbench::workloads::Matrix> m =
      blkbench::workloads::ParseMatrix(text, "fuzz.yaml", options);
  if (m.ok() && m->cells.empty()) __builtin_trap();  // a parse that succeeds has cells
  return 0;
}
