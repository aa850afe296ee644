// libFuzzer target: `blkbench import` on any bytes, as a fio job file and as a command
// line (NUL-separated arguments), through to the matrix it writes and that matrix's check.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_split.h"
#include "workloads/fio_import.h"

namespace {

void Import(const absl::StatusOr<blkbench::workloads::FioJobs>& jobs) {
  if (!jobs.ok()) return;
  const absl::StatusOr<blkbench::workloads::FioImport> imported = blkbench::workloads::ImportFio(
      *jobs, {.source = "fuzz.fio", .device_class = "", .kernel = ""});
  if (imported.ok() && imported->yaml.empty()) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  Import(blkbench::workloads::ParseFioJobFile(text, "fuzz.fio"));
  const std::vector<std::string> argv = absl::StrSplit(text, '\0');
  Import(blkbench::workloads::ParseFioCommandLine(argv));
  return 0;
}
