// BuildInitramfs: the cpio of busybox, /init and the boot modules, cached by content key.
#include "common/vm/initramfs.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/bounded_file.h"
#include "common/vm/cpio.h"
#include "common/vm/files.h"
#include "common/vm/init_script.h"
#include "common/vm/process.h"

namespace blkbench::vm {
namespace {

constexpr size_t kMaxBusybox = 8 << 20;
constexpr size_t kMaxModuleIndex = 32 << 20;
constexpr size_t kMaxModule = 64 << 20;
// Bumped when the archive's layout changes in a way the key's inputs do not show.
constexpr int kLayoutVersion = 1;

// The decompressed bytes of a module file.
absl::StatusOr<std::string> ModuleBytes(const std::string& path) {
  const char* tool = absl::EndsWith(path, ".xz")    ? "xz"
                     : absl::EndsWith(path, ".zst") ? "zstd"
                     : absl::EndsWith(path, ".gz")  ? "gzip"
                                                    : nullptr;
  if (tool == nullptr) return ReadBoundedRegularFile(path, kMaxModule, "kernel module");
  RunOptions opts;
  opts.timeout = absl::Minutes(1);
  opts.max_output = kMaxModule;
  absl::StatusOr<ProcessResult> r = RunProcess({tool, "-dc", path}, opts);
  if (!r.ok()) return r.status();
  if (!r->ok()) {
    return absl::InternalError(
        absl::StrCat(tool, " -dc ", path, " failed (", DescribeWaitStatus(r->status), ")"));
  }
  return std::move(r->output);
}

std::string ReadOrEmpty(const std::string& path) {
  absl::StatusOr<std::string> s = ReadBoundedRegularFile(path, kMaxModuleIndex, "module index");
  return s.ok() ? *s : "";
}

}  // namespace

std::vector<WantedModule> BootModules() {
  return {
      {"virtio_ring", true},
      {"virtio", true},
      {"virtio_pci_legacy_dev", false},
      {"virtio_pci_modern_dev", false},
      {"virtio_pci", true},
      {"virtio_console", true},
      {"netfs", false},
      {"fscache", false},
      {"9pnet", true},
      {"9pnet_virtio", true},
      {"9p", true},
      {"configfs", false},
      {"overlay", false},
  };
}

absl::StatusOr<std::string> BuildInitramfs(const Kernel& kernel, const std::string& cache_dir,
                                           const std::string& busybox) {
  absl::StatusOr<std::string> bb = ReadBoundedRegularFile(busybox, kMaxBusybox, "busybox");
  if (!bb.ok()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "initramfs needs a static busybox (Debian: busybox-static): ", bb.status().message()));
  }
  std::string dep, builtin;
  if (!kernel.modules_dir.empty()) {
    dep = ReadOrEmpty(kernel.modules_dir + "/modules.dep");
    builtin = ReadOrEmpty(kernel.modules_dir + "/modules.builtin");
  }
  const std::string key =
      Sha256Hex(absl::StrCat(kLayoutVersion, "\n", kernel.sha256, "\n", kernel.modules_dir, "\n",
                             Sha256Hex(dep), "\n", Sha256Hex(*bb), "\n", kInitScript));
  const std::string dir = cache_dir + "/initramfs";
  const std::string path = absl::StrCat(dir, "/", kernel.release, "-", key.substr(0, 16), ".cpio");
  if (PathExists(path)) return path;

  std::vector<ModuleIndex::Module> load;
  if (!kernel.modules_dir.empty()) {
    // Without a modules dir (a user's bzImage alone) everything must be built in; the
    // guest's console says what is missing if it is not.
    absl::StatusOr<std::vector<ModuleIndex::Module>> m =
        ModulesToLoad(ParseModuleIndex(dep, builtin), BootModules());
    if (!m.ok()) {
      return absl::NotFoundError(
          absl::StrCat("kernel ", kernel.spec, " (", kernel.release, "): ", m.status().message()));
    }
    load = *std::move(m);
  }
  CpioWriter cpio;
  for (const char* d : {"bin", "dev", "proc", "sys", "newroot", "modules"}) cpio.AddDirectory(d);
  cpio.AddCharDevice("dev/console", 0600, 5, 1);
  cpio.AddFile("bin/busybox", *bb, 0755);
  cpio.AddFile("init", kInitScript, 0755);
  for (size_t i = 0; i < load.size(); ++i) {
    absl::StatusOr<std::string> bytes = ModuleBytes(kernel.modules_dir + "/" + load[i].path);
    if (!bytes.ok()) return bytes.status();
    cpio.AddFile(absl::StrFormat("modules/%03d-%s.ko", i, ModuleName(load[i].path)), *bytes);
  }
  if (absl::Status s = MakeDirs(dir); !s.ok()) return s;
  if (absl::Status s = WriteFileAtomic(path, cpio.Finish()); !s.ok()) return s;
  return path;
}

}  // namespace blkbench::vm
