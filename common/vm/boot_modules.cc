// modules.dep / modules.builtin parsing and the dependency-ordered load list (modprobe's
// order: a module after everything it needs, as kmod's kmod_module_get_dependencies).
#include "common/vm/boot_modules.h"

#include <algorithm>
#include <functional>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace blkbench::vm {

std::string ModuleName(absl::string_view path) {
  absl::string_view base = path.substr(path.rfind('/') + 1);  // npos + 1 == 0
  base = base.substr(0, base.find(".ko"));
  std::string name(base);
  std::replace(name.begin(), name.end(), '-', '_');
  return name;
}

ModuleIndex ParseModuleIndex(absl::string_view modules_dep, absl::string_view modules_builtin) {
  ModuleIndex index;
  for (absl::string_view line : absl::StrSplit(modules_dep, '\n', absl::SkipWhitespace())) {
    size_t colon = line.find(':');
    if (colon == absl::string_view::npos) continue;
    ModuleIndex::Module m;
    m.path = std::string(absl::StripAsciiWhitespace(line.substr(0, colon)));
    for (absl::string_view dep :
         absl::StrSplit(line.substr(colon + 1), ' ', absl::SkipWhitespace())) {
      m.deps.push_back(ModuleName(dep));
    }
    index.modules[ModuleName(m.path)] = std::move(m);
  }
  for (absl::string_view line : absl::StrSplit(modules_builtin, '\n', absl::SkipWhitespace())) {
    index.builtin.insert(ModuleName(absl::StripAsciiWhitespace(line)));
  }
  return index;
}

absl::StatusOr<std::vector<ModuleIndex::Module>> ModulesToLoad(
    const ModuleIndex& index, const std::vector<WantedModule>& wanted) {
  std::vector<ModuleIndex::Module> order;
  std::set<std::string> done;
  // Depth-first: dependencies are emitted before their users. modules.dep lists the
  // whole closure for each module, and depmod refuses cycles, so depth stays small.
  std::function<void(const std::string&)> visit = [&](const std::string& name) {
    auto it = index.modules.find(name);
    if (it == index.modules.end() || !done.insert(name).second) return;
    for (const std::string& dep : it->second.deps) visit(dep);
    order.push_back(it->second);
  };
  for (const WantedModule& w : wanted) {
    const std::string name = ModuleName(w.name);
    if (index.builtin.count(name) != 0) continue;
    if (index.modules.count(name) == 0) {
      if (w.required) {
        return absl::NotFoundError(
            absl::StrCat("module ", w.name, " is neither built in nor in modules.dep"));
      }
      continue;
    }
    visit(name);
  }
  return order;
}

}  // namespace blkbench::vm
