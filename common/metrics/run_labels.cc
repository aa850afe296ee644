// Run label values; see run_labels.h.
#include "common/metrics/run_labels.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/cell_label.h"
#include "common/resolved_job.h"

namespace blkbench {

const std::string& VirtOf(const v1::DeviceFacts& device) { return device.vm().accel(); }

std::string KernelSourceOf(const v1::CellSpec& cell, const v1::DeviceFacts& device) {
  if (absl::StartsWith(cell.target().device_class(), "sim:")) return "engine";
  const v1::VmFacts& vm = device.vm();
  if (vm.name().empty()) return "host";
  if (!vm.kernel_package().empty()) return absl::StrCat("deb:", vm.kernel_package());
  return absl::StrCat("image sha256:", vm.kernel_sha256().substr(0, 12));
}

KernelLabels KernelOf(const v1::CellSpec& cell, const std::string& host_kernel) {
  const std::string& kernel = cell.target().kernel();
  KernelLabels out;
  if (IsSimulated(kernel)) {
    const std::string rest = kernel.substr(4);
    const size_t plus = rest.find('+');
    out.kernel = kernel;
    out.profile = rest.substr(0, plus);
    out.patches = plus == std::string::npos ? "none" : rest.substr(plus + 1);
    return out;
  }
  out.kernel = !host_kernel.empty() ? host_kernel : kernel.empty() ? "any" : kernel;
  return out;
}

std::string CellLabelWithout(const v1::CellSpec& cell, const std::string& axis) {
  v1::CellSpec copy;
  for (const v1::AxisValue& a : cell.axes()) {
    if (a.key() != axis) *copy.add_axes() = a;
  }
  return CellLabel(copy);
}

std::string SchedulerOf(const v1::CellSpec& cell) {
  const std::string& s = cell.queue().scheduler();
  return s.empty() ? "default" : s;
}

}  // namespace blkbench
