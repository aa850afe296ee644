// Fake cgroup trees for tests; see fake_cgroupfs.h.
#include "agent/cgroup/fake_cgroupfs.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

namespace blkbench::testing {
namespace {

void Put(const std::string& path, const std::string& content) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path) << content;
}

}  // namespace

FakeCgroupFs::FakeCgroupFs(const std::string& root, FakeCgroupOptions options) : options_(options) {
  paths_.sysfs = root + "/sys";
  paths_.procfs = root + "/proc";
  const std::string cgroup = paths_.sysfs + "/fs/cgroup";
  if (options_.version == CgroupVersion::kV1) {
    mount_point_ = cgroup + "/blkio";
    Put(paths_.procfs + "/self/mountinfo",
        "31 23 0:28 / " + cgroup + " rw,relatime - tmpfs tmpfs rw,mode=755\n" + "32 31 0:29 / " +
            cgroup + "/cpu rw,relatime shared:9 - cgroup cgroup rw,cpu\n" + "38 31 0:35 / " +
            mount_point_ + " rw,relatime - cgroup cgroup rw,blkio\n" + "41 31 0:38 / " + cgroup +
            "/unified rw,relatime - cgroup2 cgroup2 rw\n");
    Put(paths_.procfs + "/self/cgroup", "7:blkio:/agent.slice\n1:cpu:/\n0::/\n");
    Put(cgroup + "/unified/cgroup.subtree_control", "\n");
    Put(mount_point_ + "/tasks", "");
    Put(mount_point_ + "/cgroup.procs", "");
    Put(mount_point_ + "/release_agent", "\n");
  } else {
    mount_point_ = cgroup;
    Put(paths_.procfs + "/self/mountinfo", "30 23 0:26 / " + cgroup +
                                               " rw,nosuid,nodev,noexec shared:4 - cgroup2 cgroup2 "
                                               "rw,nsdelegate,memory_recursiveprot\n");
    Put(paths_.procfs + "/self/cgroup", "0::/agent.slice\n");
    Put(mount_point_ + "/cgroup.subtree_control",
        options_.io_enabled ? "cpu io memory\n" : "cpu\n");
    Put(mount_point_ + "/cgroup.procs", "");
  }
  MakeDir(own_dir());
}

int FakeCgroupFs::MakeDir(const std::string& path) const {
  if (mkdir(path.c_str(), 0755) != 0) return errno;
  if (options_.version == CgroupVersion::kV1) {
    Put(path + "/tasks", "");
    Put(path + "/cgroup.procs", "");
    Put(path + "/notify_on_release", "0\n");
    if (options_.weights) Put(path + "/blkio.bfq.weight", "100\n");
  } else {
    Put(path + "/cgroup.procs", "");
    Put(path + "/cgroup.threads", "");
    Put(path + "/cgroup.subtree_control", "\n");
    if (options_.weights) {
      Put(path + "/io.weight", "default 100\n");
      if (options_.bfq_weight) Put(path + "/io.bfq.weight", "default 100\n");
    }
  }
  return 0;
}

int FakeCgroupFs::RemoveDir(const std::string& path) {
  DIR* dir = opendir(path.c_str());
  if (dir == nullptr) return errno;
  std::vector<std::string> files;
  bool has_children = false;
  while (dirent* e = readdir(dir)) {
    const std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    if (e->d_type == DT_DIR) has_children = true;
    files.push_back(path + "/" + name);
  }
  closedir(dir);
  if (has_children) return EBUSY;
  for (const std::string& f : files) unlink(f.c_str());
  return rmdir(path.c_str()) == 0 ? 0 : errno;
}

}  // namespace blkbench::testing
