// The pure half of kernel.h: spec syntax, which package names are kernel images, dpkg's
// version order, and a bzImage's release string.
#include <fcntl.h>
#include <fnmatch.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdint>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "common/vm/kernel.h"

namespace blkbench::vm {
namespace {

constexpr absl::string_view kImagePrefix = "linux-image-";
constexpr absl::string_view kArchSuffix = "-amd64";

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// "6.1.0-57-amd64", "6.12.118+deb12-amd64": three numeric components. Meta packages
// ("6.12-amd64", "amd64", "cloud-amd64") have fewer.
bool HasFullRelease(absl::string_view release) {
  for (int part = 0; part < 3; ++part) {
    size_t n = 0;
    while (n < release.size() && IsDigit(release[n])) ++n;
    if (n == 0) return false;
    release.remove_prefix(n);
    if (part < 2) {
      if (release.empty() || release[0] != '.') return false;
      release.remove_prefix(1);
    }
  }
  return true;
}

// dpkg's order of one character in the non-digit part of a version.
int Order(absl::string_view s, size_t i) {
  if (i >= s.size()) return 0;
  char c = s[i];
  if (IsDigit(c)) return 0;
  if (std::isalpha(static_cast<unsigned char>(c))) return c;
  if (c == '~') return -1;
  return static_cast<unsigned char>(c) + 256;
}

}  // namespace

absl::StatusOr<KernelSpec> ParseKernelSpec(absl::string_view text) {
  KernelSpec spec;
  spec.text = std::string(text);
  if (text.empty()) return absl::InvalidArgumentError("kernel spec: empty");
  if (absl::ConsumePrefix(&text, "deb:")) {
    if (text.empty() || text.find_first_of(" \t\n/") != absl::string_view::npos) {
      return absl::InvalidArgumentError(
          absl::StrCat("kernel spec '", spec.text,
                       "': expected deb:PACKAGE-OR-GLOB (e.g. deb:linux-image-6.12*)"));
    }
    spec.kind = KernelSpec::Kind::kDebian;
    spec.deb_pattern =
        absl::StartsWith(text, kImagePrefix) ? std::string(text) : absl::StrCat(kImagePrefix, text);
    return spec;
  }
  spec.kind = KernelSpec::Kind::kLocal;
  size_t colon = text.find(':');
  spec.image = std::string(text.substr(0, colon));
  if (colon != absl::string_view::npos) spec.modules_root = std::string(text.substr(colon + 1));
  if (spec.image.empty() || (colon != absl::string_view::npos && spec.modules_root.empty())) {
    return absl::InvalidArgumentError(absl::StrCat(
        "kernel spec '", spec.text, "': expected deb:PATTERN or PATH/bzImage[:MODULES_DIR]"));
  }
  return spec;
}

int CompareDebianVersions(absl::string_view a, absl::string_view b) {
  size_t i = 0, j = 0;
  while (i < a.size() || j < b.size()) {
    while ((i < a.size() && !IsDigit(a[i])) || (j < b.size() && !IsDigit(b[j]))) {
      int ac = Order(a, i), bc = Order(b, j);
      if (ac != bc) return ac - bc;
      ++i;
      ++j;
    }
    while (i < a.size() && a[i] == '0') ++i;
    while (j < b.size() && b[j] == '0') ++j;
    int first_diff = 0;
    while (i < a.size() && j < b.size() && IsDigit(a[i]) && IsDigit(b[j])) {
      if (first_diff == 0) first_diff = a[i] - b[j];
      ++i;
      ++j;
    }
    if (i < a.size() && IsDigit(a[i])) return 1;
    if (j < b.size() && IsDigit(b[j])) return -1;
    if (first_diff != 0) return first_diff;
  }
  return 0;
}

std::vector<std::string> DebianImageCandidates(absl::string_view pattern,
                                               const std::vector<std::string>& names) {
  const std::string glob(pattern);
  const bool want_cloud = absl::StrContains(pattern, "cloud");
  const bool want_rt = absl::StrContains(pattern, "-rt");
  std::vector<std::string> out;
  for (const std::string& name : names) {
    if (fnmatch(glob.c_str(), name.c_str(), 0) != 0) continue;
    absl::string_view release = name;
    if (!absl::ConsumePrefix(&release, kImagePrefix) || !absl::EndsWith(release, kArchSuffix) ||
        !HasFullRelease(release)) {
      continue;
    }
    if (!want_cloud && absl::EndsWith(release, "-cloud-amd64")) continue;
    if (!want_rt && absl::EndsWith(release, "-rt-amd64")) continue;
    out.push_back(name);
  }
  std::sort(out.begin(), out.end(), [](const std::string& x, const std::string& y) {
    int c = CompareDebianVersions(x, y);
    return c != 0 ? c > 0 : x < y;
  });
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

absl::StatusOr<std::string> BzImageRelease(const std::string& path) {
  // Documentation/arch/x86/boot.rst: the setup header starts at 0x1f1; "HdrS" at 0x202;
  // kernel_version at 0x20e is the version string's offset minus 0x200.
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return absl::ErrnoToStatus(errno, "open kernel image " + path);
  unsigned char hdr[0x210];
  char version[256] = {};
  ssize_t n = pread(fd, hdr, sizeof(hdr), 0);
  bool ok = n == static_cast<ssize_t>(sizeof(hdr)) && hdr[0x202] == 'H' && hdr[0x203] == 'd' &&
            hdr[0x204] == 'r' && hdr[0x205] == 'S';
  if (ok) {
    uint32_t off = static_cast<uint32_t>(hdr[0x20e]) | (static_cast<uint32_t>(hdr[0x20f]) << 8);
    ok = off != 0 && pread(fd, version, sizeof(version) - 1, off + 0x200) > 0;
  }
  close(fd);
  absl::string_view v(version);
  v = v.substr(0, v.find(' '));
  if (!ok || v.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, " is not a bzImage (no setup header with a kernel version)"));
  }
  return std::string(v);
}

}  // namespace blkbench::vm
