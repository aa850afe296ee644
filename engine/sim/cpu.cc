// Virtual CPU accounting and reporting.
#include "engine/sim/cpu.h"

#include "absl/strings/str_format.h"

namespace blkbench::engine {

std::string_view StageName(Stage stage) {
  switch (stage) {
    case Stage::kSubmit:
      return "submit";
    case Stage::kRequestAlloc:
      return "request_alloc";
    case Stage::kTagAlloc:
      return "tag_alloc";
    case Stage::kPlugFlush:
      return "plug_flush";
    case Stage::kMerge:
      return "merge";
    case Stage::kInsert:
      return "insert";
    case Stage::kDispatch:
      return "dispatch";
    case Stage::kDriver:
      return "driver";
    case Stage::kCompletion:
      return "completion";
    case Stage::kLockSpin:
      return "lock_spin";
    case Stage::kOther:
      return "other";
  }
  return "?";
}

SimTime VirtualCpu::total_busy_ns() const {
  SimTime total = 0;
  for (SimTime ns : busy_ns_) total += ns;
  return total;
}

CpuSet::CpuSet(int cpus) {
  cpus_.reserve(static_cast<size_t>(cpus));
  for (int i = 0; i < cpus; ++i) cpus_.emplace_back(i);
}

SimTime CpuSet::TotalNs(Stage stage) const {
  SimTime total = 0;
  for (const VirtualCpu& cpu : cpus_) total += cpu.busy_ns(stage);
  return total;
}

SimTime CpuSet::TotalBusyNs() const {
  SimTime total = 0;
  for (const VirtualCpu& cpu : cpus_) total += cpu.total_busy_ns();
  return total;
}

double CpuSet::NsPerIo(Stage stage, uint64_t ios) const {
  return ios == 0 ? 0.0 : static_cast<double>(TotalNs(stage)) / static_cast<double>(ios);
}

double CpuSet::Utilisation(SimTime elapsed) const {
  if (elapsed == 0 || cpus_.empty()) return 0.0;
  return static_cast<double>(TotalBusyNs()) /
         (static_cast<double>(elapsed) * static_cast<double>(cpus_.size()));
}

std::string CpuSet::Report(uint64_t ios) const {
  std::string out;
  const double total = static_cast<double>(TotalBusyNs());
  for (int s = 0; s < kStageCount; ++s) {
    Stage stage = static_cast<Stage>(s);
    SimTime ns = TotalNs(stage);
    if (ns == 0) continue;
    absl::StrAppendFormat(&out, "%-14s %10.1f ns/io %6.1f%%\n", StageName(stage),
                          NsPerIo(stage, ios), 100.0 * static_cast<double>(ns) / total);
  }
  absl::StrAppendFormat(&out, "%-14s %10.1f ns/io\n", "total",
                        ios == 0 ? 0.0 : total / static_cast<double>(ios));
  return out;
}

}  // namespace blkbench::engine
