// Finding the I/O cgroup hierarchy; see hierarchy.h. mountinfo format:
// Documentation/filesystems/proc.rst "3.5 /proc/<pid>/mountinfo"; /proc/self/cgroup:
// Documentation/admin-guide/cgroup-v2.rst ("hierarchy-ID:controller-list:cgroup-path").
#include "agent/cgroup/hierarchy.h"

#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "agent/device/proc_parse.h"

namespace blkbench {
namespace {

bool HasToken(absl::string_view list, absl::string_view token, char sep) {
  for (absl::string_view t : absl::StrSplit(list, sep, absl::SkipEmpty())) {
    if (absl::StripAsciiWhitespace(t) == token) return true;
  }
  return false;
}

// `path` (a cgroup path as the kernel shows it) as a directory under the mount.
std::string DirOf(const CgroupMount& mount, const std::string& path) {
  std::string rel = path;
  if (mount.root != "/") {
    if (!absl::StartsWith(path, mount.root)) return mount.mount_point;  // not visible here
    rel = path.substr(mount.root.size());
  }
  while (!rel.empty() && rel.back() == '/') rel.pop_back();
  if (rel.empty()) return mount.mount_point;
  return absl::StrCat(mount.mount_point, rel[0] == '/' ? "" : "/", rel);
}

}  // namespace

absl::StatusOr<std::vector<CgroupMount>> ParseCgroupMounts(absl::string_view mountinfo) {
  std::vector<CgroupMount> mounts;
  int line_no = 0;
  for (absl::string_view line : absl::StrSplit(mountinfo, '\n', absl::SkipWhitespace())) {
    ++line_no;
    std::vector<absl::string_view> f = absl::StrSplit(line, ' ', absl::SkipEmpty());
    // id parent maj:min root mount-point options [optional fields...] - type source super-options
    size_t dash = 6;
    while (dash < f.size() && f[dash] != "-") ++dash;
    if (f.size() < 7 || dash + 2 >= f.size()) {
      return absl::InvalidArgumentError(
          absl::StrCat("mountinfo line ", line_no, " is malformed: \"", line, "\""));
    }
    const absl::string_view type = f[dash + 1];
    if (type != "cgroup" && type != "cgroup2") continue;
    CgroupMount m;
    m.version = type == "cgroup2" ? CgroupVersion::kV2 : CgroupVersion::kV1;
    m.root = UnescapeOctal(f[3]);
    m.mount_point = UnescapeOctal(f[4]);
    m.blkio = m.version == CgroupVersion::kV1 && dash + 3 < f.size() &&
              HasToken(f[dash + 3], "blkio", ',');
    mounts.push_back(std::move(m));
  }
  return mounts;
}

absl::StatusOr<std::string> OwnCgroupPath(absl::string_view proc_self_cgroup,
                                          CgroupVersion version) {
  for (absl::string_view line : absl::StrSplit(proc_self_cgroup, '\n', absl::SkipWhitespace())) {
    std::vector<absl::string_view> f = absl::StrSplit(line, absl::MaxSplits(':', 2));
    if (f.size() != 3) continue;
    const bool match = version == CgroupVersion::kV2 ? (f[0] == "0" && f[1].empty())
                                                     : HasToken(f[1], "blkio", ',');
    if (match) return std::string(absl::StripAsciiWhitespace(f[2]));
  }
  return absl::NotFoundError(absl::StrCat(
      "no ", version == CgroupVersion::kV2 ? "cgroup v2" : "blkio", " line in /proc/self/cgroup"));
}

bool IsValidCgroupParent(absl::string_view parent) {
  if (parent.empty() || parent.size() > 200) return false;
  for (absl::string_view part : absl::StrSplit(parent, '/')) {
    if (part.empty() || part == "." || part == "..") return false;
    for (char c : part) {
      if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-') {
        return false;
      }
    }
  }
  return true;
}

absl::StatusOr<IoHierarchy> FindIoHierarchy(const SystemPaths& paths, const std::string& parent) {
  if (!IsValidCgroupParent(parent)) {
    return absl::InvalidArgumentError(absl::StrCat("bad cgroup parent \"", parent, "\""));
  }
  absl::StatusOr<std::string> mountinfo = ReadWholeFile(paths.procfs + "/self/mountinfo");
  if (!mountinfo.ok()) return mountinfo.status();
  absl::StatusOr<std::vector<CgroupMount>> mounts = ParseCgroupMounts(*mountinfo);
  if (!mounts.ok()) return mounts.status();
  absl::StatusOr<std::string> self = ReadWholeFile(paths.procfs + "/self/cgroup");
  if (!self.ok()) return self.status();

  const size_t slash = parent.rfind('/');
  const std::string above = slash == std::string::npos ? "" : "/" + parent.substr(0, slash);
  std::vector<std::string> found;
  for (const CgroupMount& m : *mounts) {
    if (m.version != CgroupVersion::kV2) continue;
    const std::string control = absl::StrCat(m.mount_point, above, "/cgroup.subtree_control");
    absl::StatusOr<std::string> enabled = ReadAttribute(control);
    if (enabled.ok() && HasToken(*enabled, "io", ' ')) {
      absl::StatusOr<std::string> own = OwnCgroupPath(*self, CgroupVersion::kV2);
      return IoHierarchy{CgroupVersion::kV2, m.mount_point,
                         own.ok() ? DirOf(m, *own) : m.mount_point};
    }
    found.push_back(absl::StrCat("cgroup v2 at ", m.mount_point, " without io in ", control));
  }
  for (const CgroupMount& m : *mounts) {
    if (m.version != CgroupVersion::kV1 || !m.blkio) continue;
    absl::StatusOr<std::string> own = OwnCgroupPath(*self, CgroupVersion::kV1);
    return IoHierarchy{CgroupVersion::kV1, m.mount_point,
                       own.ok() ? DirOf(m, *own) : m.mount_point};
  }
  found.push_back("no cgroup v1 hierarchy with blkio");
  return absl::FailedPreconditionError(
      absl::StrCat("no usable I/O cgroup hierarchy (", absl::StrJoin(found, "; "),
                   "); enable it with 'echo +io > <cgroup2 mount>/cgroup.subtree_control' or run "
                   "the cell with cgroup: root"));
}

}  // namespace blkbench
