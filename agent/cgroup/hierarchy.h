// Where the agent can make I/O cgroups: a cgroup v2 (unified) hierarchy with the io
// controller enabled, else a cgroup v1 hierarchy with the blkio controller; found from
// /proc/self/mountinfo and /proc/self/cgroup. Pure functions; thread-safe.
#ifndef BLKBENCH_AGENT_CGROUP_HIERARCHY_H_
#define BLKBENCH_AGENT_CGROUP_HIERARCHY_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "agent/device/sysfs.h"

namespace blkbench {

enum class CgroupVersion { kV1, kV2 };

// A mounted cgroup hierarchy (one line of mountinfo with type cgroup or cgroup2).
struct CgroupMount {
  CgroupVersion version = CgroupVersion::kV2;
  std::string mount_point;  // unescaped
  std::string root;         // the hierarchy's path shown at the mount point, "/" normally
  bool blkio = false;       // v1: the blkio controller is bound to this hierarchy
};

// The cgroup hierarchies in mountinfo text, in file order. InvalidArgument for a malformed line.
absl::StatusOr<std::vector<CgroupMount>> ParseCgroupMounts(absl::string_view mountinfo);

// The calling process's cgroup path ("/system.slice/x.service") in the v2 hierarchy (the
// "0::" line) or in the v1 hierarchy holding blkio, from /proc/self/cgroup text. NotFound if
// that hierarchy is not listed.
absl::StatusOr<std::string> OwnCgroupPath(absl::string_view proc_self_cgroup,
                                          CgroupVersion version);

struct IoHierarchy {
  CgroupVersion version = CgroupVersion::kV2;
  std::string mount_point;  // e.g. /sys/fs/cgroup (v2) or /sys/fs/cgroup/blkio (v1)
  // The agent's own cgroup directory in it: tasks left in a group go back there.
  std::string own_dir;
};

// Finds the hierarchy in which `parent` (a relative path, e.g. "blkbench") is made, reading
// <procfs>/self/mountinfo and <procfs>/self/cgroup. cgroup v2 is used when it is mounted and
// "io" is in the cgroup.subtree_control of the directory `parent` is created in (the
// hierarchy root for "blkbench"); otherwise a v1 hierarchy with blkio. FailedPrecondition,
// saying what was found, when neither is usable.
absl::StatusOr<IoHierarchy> FindIoHierarchy(const SystemPaths& paths, const std::string& parent);

// True if `parent` is a usable relative cgroup path: components of [A-Za-z0-9._-], none "."
// or "..", no leading or trailing '/'.
bool IsValidCgroupParent(absl::string_view parent);

}  // namespace blkbench

#endif  // BLKBENCH_AGENT_CGROUP_HIERARCHY_H_
