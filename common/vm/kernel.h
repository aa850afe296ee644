// Kernel specs for VM test hosts and the cache that turns them into a bootable image plus
// its modules.
//
//   deb:PATTERN                 the newest Debian linux-image-*-amd64 package matching
//                               PATTERN (a name or glob; "linux-image-" is prepended when
//                               missing: deb:6.12* = deb:linux-image-6.12*), downloaded
//                               with apt-get download and unpacked with dpkg -x (never
//                               installed) into the cache, or used in place when that
//                               package is installed
//   PATH/bzImage[:MODULES_DIR]  a user's build; MODULES_DIR is what `make modules_install
//                               INSTALL_MOD_PATH=DIR` left (DIR/lib/modules/<release>)
//
// Package choice: names from `apt-cache pkgnames linux-image-`, matching the glob, ending
// in -amd64 (so no -dbg, -unsigned or templates), with a full release (6.1.0-57,
// 6.12.118+deb12: meta packages such as linux-image-6.12-amd64 are not images), -cloud
// and -rt flavours only when PATTERN names them; newest by dpkg's version order among
// those apt can download or has installed. Versions are never hard-coded: old ones leave
// the archive.
#ifndef BLKBENCH_COMMON_VM_KERNEL_H_
#define BLKBENCH_COMMON_VM_KERNEL_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace blkbench::vm {

inline constexpr char kDefaultKernelCache[] = "/var/cache/blkbench/kernels";

struct KernelSpec {
  enum class Kind { kDebian, kLocal };
  Kind kind = Kind::kDebian;
  std::string text;          // as written
  std::string deb_pattern;   // kDebian: starts with linux-image-
  std::string image;         // kLocal
  std::string modules_root;  // kLocal, may be empty (then modules must be built in)
};

// Parses a spec (syntax above). InvalidArgument naming the spec when it is malformed.
absl::StatusOr<KernelSpec> ParseKernelSpec(absl::string_view text);

// A kernel ready to boot.
struct Kernel {
  std::string spec;         // the spec it came from
  std::string package;      // the Debian package, if any
  std::string image;        // bzImage / vmlinuz
  std::string modules_dir;  // .../lib/modules/<release> with modules.dep; "" if none
  std::string release;      // uname -r
  std::string sha256;       // of image
};

// Resolves and, for deb: specs, fetches into `cache_dir` (created; a flock on
// cache_dir/.lock serialises unpacking between processes; each package is unpacked into a
// temporary directory and renamed into place, so a crash leaves no half-unpacked kernel).
// Errors name the spec: NotFound (no such package, no bzImage, no modules for the
// release), Internal with the output of a failed apt-get / dpkg / depmod.
absl::StatusOr<Kernel> GetKernel(const KernelSpec& spec, const std::string& cache_dir);

// The package a deb: pattern resolves to now (apt-cache pkgnames + policy). NotFound
// naming the pattern when nothing matches or nothing matching is downloadable.
struct DebianPackage {
  std::string name;
  bool installed = false;
};
absl::StatusOr<DebianPackage> ResolveDebianPackage(absl::string_view pattern);

// Pure part of the choice above: the names among `names` that may be the kernel image
// `pattern` means, newest first.
std::vector<std::string> DebianImageCandidates(absl::string_view pattern,
                                               const std::vector<std::string>& names);

// dpkg's order of version strings (verrevcmp in dpkg's lib/dpkg/version.c, without the
// epoch and revision split, which release strings in package names do not use): '~'
// sorts before everything, digit runs compare as numbers. <0, 0 or >0.
int CompareDebianVersions(absl::string_view a, absl::string_view b);

// The release string a bzImage announces (its setup header's kernel_version, first
// word). InvalidArgument when the file is not a bzImage.
absl::StatusOr<std::string> BzImageRelease(const std::string& path);

}  // namespace blkbench::vm

#endif  // BLKBENCH_COMMON_VM_KERNEL_H_
