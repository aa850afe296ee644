// Matrix checks against the engine's vocabulary (see sim_checks.h).
#include "workloads/sim_checks.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/resolved_job.h"
#include "common/sim_vocabulary.h"
#include "common/suggest.h"
#include "workloads/absl_compat.h"

namespace blkbench::workloads {
namespace {

std::string PatchFlagList() {
  std::vector<absl::string_view> names;
  for (const PatchFlagDef& f : PatchFlags()) names.push_back(ToAbsl(f.name));
  return absl::StrJoin(names, ", ");
}

std::string DeviceClassProblem(std::string_view value) {
  if (!IsSimulated(value) || FindSimDevice(value) != nullptr) return "";
  std::vector<std::string> names;
  for (const SimDeviceDef& d : SimDevices()) names.push_back(absl::StrCat("sim:", ToAbsl(d.name)));
  const std::vector<std::string_view> candidates(names.begin(), names.end());
  return absl::StrCat("key 'device_class': unknown simulated device '", ToAbsl(value), "'",
                      DidYouMean(value, candidates), "; the engine models ", SimDeviceList());
}

std::string KernelProblem(std::string_view value) {
  if (!IsSimulated(value)) return "";  // a glob on the agents' kernel releases
  SimKernelError error;
  if (ParseSimKernel(value, &error).ok()) return "";
  if (!error.bad_patch.empty() && FindPatchFlag(error.bad_patch) == nullptr) {
    std::vector<std::string_view> candidates;
    for (const PatchFlagDef& f : PatchFlags()) candidates.push_back(f.name);
    return absl::StrCat("key 'kernel': unknown patch flag '", error.bad_patch, "' in '",
                        ToAbsl(value), "'", DidYouMean(error.bad_patch, candidates),
                        "; patch flags: ", PatchFlagList());
  }
  if (!error.bad_patch.empty()) {
    return absl::StrCat("key 'kernel': patch flag '", error.bad_patch, "' is given twice in '",
                        ToAbsl(value), "'");
  }
  return absl::StrCat("key 'kernel': expected sim:<major>.<minor>[+patch...] (e.g. ",
                      ToAbsl(kDefaultSimKernel), "+dd-batch-dispatch), got '", ToAbsl(value), "' (",
                      error.message, ")");
}

std::string MachineProblem(std::string_view value) {
  if (IsMachineProfilePath(value) || IsKnownMachineProfile(value)) return "";
  std::vector<std::string_view> candidates;
  for (const MachineProfileDef& m : MachineProfiles()) candidates.push_back(m.name);
  std::vector<absl::string_view> names;
  names.reserve(candidates.size());
  for (std::string_view n : candidates) names.push_back(ToAbsl(n));
  return absl::StrCat("key 'machine': unknown machine profile '", ToAbsl(value), "'",
                      DidYouMean(value, candidates), "; profiles: ", absl::StrJoin(names, ", "),
                      ", or a path to a profile file (containing '/' or ending in .yaml)");
}

}  // namespace

std::string SimValueProblem(std::string_view canonical, std::string_view value) {
  if (canonical == "device_class") return DeviceClassProblem(value);
  if (canonical == "kernel") return KernelProblem(value);
  if (canonical == "machine") return MachineProblem(value);
  return "";
}

std::string DeviceParamProblem(std::string_view family_name, std::string_view name,
                               std::string_view value) {
  const DeviceFamilyDef* family = FindDeviceFamily(family_name);
  if (family == nullptr) return absl::StrCat("unknown device '", ToAbsl(family_name), "'");
  const std::string key = absl::StrCat(ToAbsl(family_name), ".", ToAbsl(name));
  const DeviceParamDef* def = FindDeviceParam(*family, name);
  if (def == nullptr) {
    std::vector<std::string_view> candidates;
    for (const DeviceParamDef& p : family->params) candidates.push_back(p.name);
    const std::string_view best = ClosestMatch(name, candidates);
    return absl::StrCat("unknown key '", key, "'",
                        best.empty() ? ""
                                     : absl::StrCat(" (did you mean '", ToAbsl(family_name), ".",
                                                    ToAbsl(best), "'?)"),
                        "; ", ToAbsl(family_name), " parameters: ", DeviceParamList(*family));
  }
  ParsedParam parsed;
  if (!ParseDeviceParam(*def, value, &parsed)) {
    return absl::StrCat("key '", key, "': expected ", DeviceParamExpected(*def), ", got '",
                        ToAbsl(value), "'");
  }
  return "";
}

void WarnPatchesOutsideTheirScheduler(const std::vector<Binding>& bindings,
                                      const std::vector<v1::CellSpec>& cells, ErrorList& errors) {
  const Binding* kernel = nullptr;
  for (const Binding& b : bindings) {
    if (b.def->canonical == "kernel") kernel = &b;
  }
  if (kernel == nullptr) return;
  // Per kernel value: the schedulers of the simulated cells that run it, in cell order.
  std::map<std::string, std::vector<std::string>> schedulers;
  for (const v1::CellSpec& cell : cells) {
    if (!IsSimulated(cell.target().device_class())) continue;
    const std::string& sched = cell.queue().scheduler();
    std::vector<std::string>& list = schedulers[cell.target().kernel()];
    const std::string name = sched.empty() ? "none" : sched;
    if (std::find(list.begin(), list.end(), name) == list.end()) list.push_back(name);
  }
  for (const Value& v : kernel->values) {
    absl::StatusOr<SimKernel> k = ParseSimKernel(v.text);
    if (!IsSimulated(v.text) || !k.ok() || k->patches.empty()) continue;
    for (const std::string& sched : schedulers[v.text]) {
      std::vector<std::string> why;
      bool applies = false;
      for (const std::string& patch : k->patches) {
        const PatchFlagDef* flag = FindPatchFlag(patch);
        if (flag == nullptr) continue;
        applies = applies || PatchAppliesTo(*flag, sched);
        why.push_back(absl::StrCat(patch, " changes only ", PatchSchedulerList(*flag)));
      }
      if (applies) continue;
      errors.AddWarning(
          v.pos, absl::StrCat("kernel '", v.text, "' with scheduler ", sched, " runs as sim:",
                              k->major, ".", k->minor, " (", absl::StrJoin(why, "; "),
                              "); such cells are controls, not measurements of the patch"));
    }
  }
}

}  // namespace blkbench::workloads
