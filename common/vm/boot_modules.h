// Which kernel modules an initramfs must load, in which order, from a kernel's
// modules.dep and modules.builtin (what depmod wrote; modprobe's own sources of truth).
#ifndef BLKBENCH_COMMON_VM_BOOT_MODULES_H_
#define BLKBENCH_COMMON_VM_BOOT_MODULES_H_

#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace blkbench::vm {

// A module name as modprobe compares them: basename without .ko[.xz|.zst|.gz], '-' as '_'.
std::string ModuleName(absl::string_view path);

// depmod's view of one kernel: every loadable module's path (relative to the modules
// dir) and direct dependencies, and the names of built-in modules.
struct ModuleIndex {
  struct Module {
    std::string path;
    std::vector<std::string> deps;  // names
  };
  std::map<std::string, Module> modules;
  std::set<std::string> builtin;
};

// Parses modules.dep ("kernel/a.ko.xz: kernel/b.ko.xz kernel/c.ko.xz") and
// modules.builtin (one path a line).
ModuleIndex ParseModuleIndex(absl::string_view modules_dep, absl::string_view modules_builtin);

// The modules to load, dependencies first, for `wanted` (each either required or
// optional). A built-in module needs nothing. NotFound naming the first required module
// that is neither loadable nor built in; optional ones that are neither are skipped.
struct WantedModule {
  std::string name;
  bool required = true;
};
absl::StatusOr<std::vector<ModuleIndex::Module>> ModulesToLoad(
    const ModuleIndex& index, const std::vector<WantedModule>& wanted);

}  // namespace blkbench::vm

#endif  // BLKBENCH_COMMON_VM_BOOT_MODULES_H_
