// Run label values; see run_labels.h.
#include "common/metrics/run_labels.h"

#include "common/cell_label.h"
#include "common/resolved_job.h"

namespace blkbench {

const std::string& VirtOf(const v1::DeviceFacts& device) { return device.vm().accel(); }

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
