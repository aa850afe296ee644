// Test helper: a fake cgroup hierarchy of plain directories and files in a temporary
// directory, with the mountinfo and /proc/self/cgroup that point at it, and mkdir/rmdir
// functions that add and remove the control files the kernel would.
#ifndef BLKBENCH_AGENT_CGROUP_FAKE_CGROUPFS_H_
#define BLKBENCH_AGENT_CGROUP_FAKE_CGROUPFS_H_

#include <string>

#include "agent/cgroup/hierarchy.h"
#include "agent/device/sysfs.h"

namespace blkbench::testing {

struct FakeCgroupOptions {
  CgroupVersion version = CgroupVersion::kV1;
  bool io_enabled = true;  // v2: "io" in the root's cgroup.subtree_control
  bool weights = true;     // new groups have a weight file (bfq loaded)
  bool bfq_weight = true;  // v2: io.bfq.weight (else only io.weight)
};

// Lays out, under `root`:
//  v1: <root>/sys/fs/cgroup/blkio (cgroup, blkio) and an unused cgroup2 at .../unified, as on
//      hybrid hosts; the agent lives in /agent.slice of blkio.
//  v2: <root>/sys/fs/cgroup (cgroup2); the agent lives in /agent.slice.
// Not thread-safe; tests use one per fixture.
class FakeCgroupFs {
 public:
  FakeCgroupFs(const std::string& root, FakeCgroupOptions options);

  const SystemPaths& paths() const { return paths_; }
  const std::string& mount_point() const { return mount_point_; }
  std::string own_dir() const { return mount_point_ + "/agent.slice"; }

  // mkdir plus the new cgroup's control files with the kernel's defaults: 0 or an errno.
  int MakeDir(const std::string& path) const;
  // Like rmdir of a cgroup: EBUSY while it has child groups, else its files go with it.
  static int RemoveDir(const std::string& path);

 private:
  FakeCgroupOptions options_;
  SystemPaths paths_;
  std::string mount_point_;
};

}  // namespace blkbench::testing

#endif  // BLKBENCH_AGENT_CGROUP_FAKE_CGROUPFS_H_
