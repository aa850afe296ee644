// PrepareVm and where its pieces are found (see vm_host.h).
#include "common/vm/vm_host.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "common/vm/files.h"
#include "common/vm/initramfs.h"
#include "common/vm/kernel.h"

namespace blkbench::vm {

std::string DefaultKernelCacheDir() {
  if (const char* env = std::getenv("BLKBENCH_KERNEL_CACHE"); env != nullptr && *env != '\0') {
    return env;
  }
  if (const char* home = std::getenv("HOME"); home != nullptr && *home == '/') {
    return absl::StrCat(home, "/.cache/blkbench-kernels");
  }
  return kDefaultKernelCache;
}

absl::StatusOr<std::string> FindVmProgram(absl::string_view name) {
  std::vector<std::string> looked;
  const std::string var =
      absl::StrCat("BLKBENCH_", absl::AsciiStrToUpper(absl::StrReplaceAll(name, {{"-", "_"}})));
  if (const char* env = std::getenv(var.c_str()); env != nullptr && *env != '\0') {
    if (*env == '/' && access(env, X_OK) == 0) return std::string(env);
    return absl::NotFoundError(
        absl::StrCat("$", var, " is '", env, "', not an absolute path to an executable"));
  }
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const std::string beside = (self.parent_path() / std::string(name)).string();
    if (access(beside.c_str(), X_OK) == 0) return beside;
    looked.push_back(beside);
  }
#ifdef BLKBENCH_VM_BUILD_DIR
  const std::string built = absl::StrCat(BLKBENCH_VM_BUILD_DIR, "/", name);
  if (access(built.c_str(), X_OK) == 0) return built;
  looked.push_back(built);
#endif
  return absl::NotFoundError(absl::StrCat("no ", name, " program: set $", var, "; looked at ",
                                          absl::StrJoin(looked, ", ")));
}

absl::StatusOr<VmConfig> PrepareVm(const VmHostSpec& spec) {
  auto fail = [&](const absl::Status& s) {
    return absl::Status(s.code(), absl::StrCat("kernel '", spec.kernel, "': ", s.message()));
  };
  absl::StatusOr<KernelSpec> kspec = ParseKernelSpec(spec.kernel);
  if (!kspec.ok()) return kspec.status();
  const std::string cache = spec.cache_dir.empty() ? DefaultKernelCacheDir() : spec.cache_dir;
  absl::StatusOr<Kernel> kernel = GetKernel(*kspec, cache);
  if (!kernel.ok()) return fail(kernel.status());
  absl::StatusOr<std::string> initramfs = BuildInitramfs(*kernel, cache);
  if (!initramfs.ok()) return fail(initramfs.status());
  absl::StatusOr<std::string> guest = FindVmProgram("blkbench-vm-guest");
  if (!guest.ok()) return guest.status();
  VmConfig c;
  c.kernel = *std::move(kernel);
  c.initramfs = *std::move(initramfs);
  c.guest_program = *std::move(guest);
  c.vcpus = spec.vcpus;
  c.memory_mb = spec.memory_mb;
  c.disks = spec.disks;
  c.accel = spec.accel;
  c.work_parent = spec.work_parent;
  c.extra_cmdline = spec.cmdline;
  return c;
}

}  // namespace blkbench::vm
