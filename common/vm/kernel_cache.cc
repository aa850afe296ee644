// The fetching half of kernel.h: apt-cache to pick a package, apt-get download + dpkg -x
// + depmod -b into the cache, or a user's bzImage and modules in place.
#include <dirent.h>
#include <sys/stat.h>

#include <cstdio>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/vm/files.h"
#include "common/vm/kernel.h"
#include "common/vm/process.h"

namespace blkbench::vm {
namespace {

constexpr absl::Duration kAptQueryTimeout = absl::Minutes(2);
constexpr absl::Duration kDownloadTimeout = absl::Minutes(30);

std::vector<std::string> ListDir(const std::string& dir) {
  std::vector<std::string> out;
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return out;
  while (dirent* e = readdir(d)) {
    absl::string_view name = e->d_name;
    if (name != "." && name != "..") out.emplace_back(name);
  }
  closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

// The release's modules dir under `root` (lib/modules or usr/lib/modules), or "".
std::string ModulesDirIn(const std::string& root, const std::string& release) {
  for (const char* sub : {"/lib/modules/", "/usr/lib/modules/"}) {
    std::string dir = absl::StrCat(root, sub, release);
    if (PathExists(dir)) return dir;
  }
  return "";
}

// The kernel an unpacked package left in `root` (boot/vmlinuz-<release>).
absl::StatusOr<Kernel> KernelInRoot(const KernelSpec& spec, const std::string& package,
                                    const std::string& root, const std::string& release) {
  Kernel k;
  k.spec = spec.text;
  k.package = package;
  k.release = release;
  k.image = absl::StrCat(root, "/boot/vmlinuz-", release);
  if (!PathExists(k.image)) {
    return absl::NotFoundError(absl::StrCat("kernel spec '", spec.text, "': package ", package,
                                            " has no bzImage at ", k.image, " (",
                                            absl::StrJoin(ListDir(root + "/boot"), ", "), ")"));
  }
  k.modules_dir = ModulesDirIn(root, release);
  if (k.modules_dir.empty() || !PathExists(k.modules_dir + "/modules.dep")) {
    return absl::NotFoundError(absl::StrCat("kernel spec '", spec.text, "': package ", package,
                                            " has no modules (with modules.dep) for ", release,
                                            " under ", root));
  }
  absl::StatusOr<std::string> sha = Sha256OfFile(k.image);
  if (!sha.ok()) return sha.status();
  k.sha256 = *sha;
  return k;
}

// apt-get download + dpkg -x + depmod -b into `dest` (which must not exist), through a
// temporary directory beside it. Requires the cache lock.
absl::Status Unpack(const std::string& cache_dir, const std::string& package,
                    const std::string& release, const std::string& dest) {
  absl::StatusOr<std::string> tmp = MakeTempDir(cache_dir, ".unpack-");
  if (!tmp.ok()) return tmp.status();
  auto cleanup = [&](const absl::Status& s) {
    absl::Status removed = RemoveTree(*tmp);
    return s.ok() ? removed : s;
  };
  RunOptions download;
  download.cwd = *tmp;
  download.timeout = kDownloadTimeout;
  absl::StatusOr<std::string> out = RunChecked({"apt-get", "download", package}, download);
  if (!out.ok()) return cleanup(out.status());
  std::string deb;
  for (const std::string& f : ListDir(*tmp)) {
    if (absl::EndsWith(f, ".deb")) deb = absl::StrCat(*tmp, "/", f);
  }
  if (deb.empty()) {
    return cleanup(
        absl::NotFoundError(absl::StrCat("apt-get download ", package, " left no .deb in ", *tmp)));
  }
  const std::string root = *tmp + "/root";
  RunOptions unpack;
  unpack.timeout = kDownloadTimeout;
  if (out = RunChecked({"dpkg", "-x", deb, root}, unpack); !out.ok()) {
    return cleanup(out.status());
  }
  if (ModulesDirIn(root, release).empty()) {
    return cleanup(absl::NotFoundError(
        absl::StrCat(package, " has no lib/modules/", release, " (",
                     absl::StrJoin(ListDir(root + "/lib/modules"), ", "), ")")));
  }
  if (out = RunChecked({"depmod", "-b", root, release}, unpack); !out.ok()) {
    return cleanup(out.status());
  }
  if (rename(root.c_str(), dest.c_str()) != 0) {
    return cleanup(absl::ErrnoToStatus(errno, absl::StrCat("rename ", root, " to ", dest)));
  }
  return cleanup(absl::OkStatus());
}

absl::StatusOr<Kernel> DebianKernel(const KernelSpec& spec, const std::string& cache_dir) {
  absl::StatusOr<DebianPackage> pkg = ResolveDebianPackage(spec.deb_pattern);
  if (!pkg.ok()) {
    return absl::Status(pkg.status().code(),
                        absl::StrCat("kernel spec '", spec.text, "': ", pkg.status().message()));
  }
  // Debian names images linux-image-<release>.
  std::string release(absl::StripPrefix(pkg->name, "linux-image-"));
  if (pkg->installed && PathExists("/boot/vmlinuz-" + release) &&
      PathExists(absl::StrCat("/lib/modules/", release, "/modules.dep"))) {
    return KernelInRoot(spec, pkg->name, "", release);
  }
  if (absl::Status s = MakeDirs(cache_dir + "/deb"); !s.ok()) return s;
  absl::StatusOr<FileLock> lock = FileLock::Acquire(cache_dir + "/.lock");
  if (!lock.ok()) return lock.status();
  const std::string dest = absl::StrCat(cache_dir, "/deb/", pkg->name);
  if (!PathExists(dest)) {
    // Leftovers of a process killed while unpacking: nobody else unpacks (we hold the lock).
    for (const std::string& f : ListDir(cache_dir)) {
      if (absl::StartsWith(f, ".unpack-")) {
        if (absl::Status s = RemoveTree(absl::StrCat(cache_dir, "/", f)); !s.ok()) return s;
      }
    }
    if (absl::Status s = Unpack(cache_dir, pkg->name, release, dest); !s.ok()) {
      return absl::Status(s.code(), absl::StrCat("kernel spec '", spec.text, "': ", s.message()));
    }
  }
  return KernelInRoot(spec, pkg->name, dest, release);
}

absl::StatusOr<Kernel> LocalKernel(const KernelSpec& spec) {
  absl::StatusOr<std::string> release = BzImageRelease(spec.image);
  if (!release.ok()) {
    return absl::Status(release.status().code(), absl::StrCat("kernel spec '", spec.text,
                                                              "': ", release.status().message()));
  }
  Kernel k;
  k.spec = spec.text;
  k.image = spec.image;
  k.release = *release;
  if (!spec.modules_root.empty()) {
    k.modules_dir = ModulesDirIn(spec.modules_root, k.release);
    if (k.modules_dir.empty()) {
      return absl::NotFoundError(
          absl::StrCat("kernel spec '", spec.text, "': no modules for release ", k.release, " in ",
                       spec.modules_root, "/lib/modules (it has: ",
                       absl::StrJoin(ListDir(spec.modules_root + "/lib/modules"), ", "), ")"));
    }
    if (!PathExists(k.modules_dir + "/modules.dep")) {
      return absl::NotFoundError(absl::StrCat("kernel spec '", spec.text, "': ", k.modules_dir,
                                              " has no modules.dep (run depmod -b ",
                                              spec.modules_root, " ", k.release, ")"));
    }
  }
  absl::StatusOr<std::string> sha = Sha256OfFile(k.image);
  if (!sha.ok()) return sha.status();
  k.sha256 = *sha;
  return k;
}

}  // namespace

absl::StatusOr<DebianPackage> ResolveDebianPackage(absl::string_view pattern) {
  RunOptions query;
  query.timeout = kAptQueryTimeout;
  query.max_output = 16 << 20;
  absl::StatusOr<std::string> names = RunChecked({"apt-cache", "pkgnames", "linux-image-"}, query);
  if (!names.ok()) return names.status();
  std::vector<std::string> candidates =
      DebianImageCandidates(pattern, absl::StrSplit(*names, '\n', absl::SkipWhitespace()));
  if (candidates.empty()) {
    return absl::NotFoundError(absl::StrCat("no Debian kernel image package matches ", pattern,
                                            " (apt-cache pkgnames linux-image-; apt-get update?)"));
  }
  // pkgnames also lists names only mentioned by other packages: ask which have a version.
  std::vector<std::string> argv = {"apt-cache", "policy"};
  argv.insert(argv.end(), candidates.begin(), candidates.end());
  absl::StatusOr<std::string> policy = RunChecked(argv, query);
  if (!policy.ok()) return policy.status();
  std::string current;
  std::map<std::string, DebianPackage> usable;
  for (absl::string_view line : absl::StrSplit(*policy, '\n')) {
    if (!line.empty() && line[0] != ' ' && absl::EndsWith(line, ":")) {
      current = std::string(line.substr(0, line.size() - 1));
      continue;
    }
    absl::string_view v = absl::StripAsciiWhitespace(line);
    bool installed = absl::ConsumePrefix(&v, "Installed: ");
    if ((installed || absl::ConsumePrefix(&v, "Candidate: ")) && v != "(none)") {
      usable[current].name = current;
      usable[current].installed |= installed;
    }
  }
  for (const std::string& name : candidates) {
    if (auto it = usable.find(name); it != usable.end()) return it->second;
  }
  return absl::NotFoundError(absl::StrCat(
      "no package matching ", pattern,
      " is downloadable or installed (newest known: ", candidates.front(), "; apt-get update?)"));
}

absl::StatusOr<Kernel> GetKernel(const KernelSpec& spec, const std::string& cache_dir) {
  if (spec.kind == KernelSpec::Kind::kDebian) return DebianKernel(spec, cache_dir);
  return LocalKernel(spec);
}

}  // namespace blkbench::vm
