// libFuzzer target: a SubmitExperiment request as the controller receives it, any bytes
// as the wire message, then the matrix and attached machine files as Controller::Submit
// parses them (the store and placement, which see only parsed cells, are left out).
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

#include "blkbench/v1/controller.pb.h"
#include "workloads/matrix.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  blkbench::v1::SubmitExperimentRequest req;
  if (!req.ParseFromArray(data, static_cast<int>(size))) return 0;
  const blkbench::workloads::ParseOptions options{
      .read_machine_file =
          blkbench::workloads::AttachedMachineFiles(std::map<std::string, std::string>(
              req.machine_files().begin(), req.machine_files().end()))};
  (void)blkbench::workloads::ParseMatrix(req.matrix_text(), req.file_name(), options).ok();
  return 0;
}
