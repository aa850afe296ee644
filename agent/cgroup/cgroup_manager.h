// Builds a run's cgroup layout for real (one child group per CgroupGroup, with its io weight),
// puts the run's job tasks in their groups, and removes the groups afterwards. Everything it
// creates is journaled first, so an agent that crashes mid-run removes it at its next start
// (SettingsJournal::RecoverAll).
#ifndef BLKBENCH_AGENT_CGROUP_CGROUP_MANAGER_H_
#define BLKBENCH_AGENT_CGROUP_CGROUP_MANAGER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "agent/cgroup/hierarchy.h"
#include "agent/device/settings_journal.h"
#include "agent/device/sysfs.h"
#include "blkbench/v1/workload.pb.h"

namespace blkbench {

// mkdir(2) of a cgroup: 0 or an errno value. The kernel fills a new cgroup with its control
// files; tests on a fake tree substitute a function that does the same.
using MakeDirFn = std::function<int(const std::string& path)>;

struct CgroupOptions {
  // Where the runs' groups go, relative to the hierarchy root (agent config `cgroup_parent`).
  // Created if missing (and then removed when no run uses it); if it exists, it is kept.
  std::string parent = "blkbench";
  SystemPaths paths = {};
  MakeDirFn make_dir = nullptr;  // default: mkdir(2) with mode 0755
};

class CgroupManager;

// One run's groups, from CgroupManager::Build until Remove. Place may be called from any one
// thread; Remove and the destructor must not overlap with Place.
class CgroupPlacement {
 public:
  // Removes the groups unless Remove was called; an error then only stays in the journal
  // (and is retried at the next agent start).
  ~CgroupPlacement();
  CgroupPlacement(const CgroupPlacement&) = delete;
  CgroupPlacement& operator=(const CgroupPlacement&) = delete;

  // Moves task `tid` into the group of job `job` (Build's `job_group`, by default the
  // layout's order).
  // `tid` is a process job's pid (its whole thread group moves: cgroup.procs) or, for jobs as
  // threads on cgroup v1, the thread's id (only that thread moves: tasks). Call it before the
  // task issues I/O, so bfq charges every request to the group. Errors name the group and errno.
  absl::Status Place(uint32_t job, int tid);

  // Moves any task still in the groups back to the agent's own cgroup, removes the groups (and
  // the shared parent if this agent created it and no other run uses it) and drops the journal
  // entry. Idempotent. On error the entry stays for the next attempt (RecoverAll).
  absl::Status Remove();

  CgroupVersion version() const { return version_; }
  // The group directories, in layout order, and the run's directory holding them.
  const std::vector<std::string>& group_dirs() const { return group_dirs_; }
  const std::string& run_dir() const { return run_dir_; }
  const std::string& journal_entry() const { return entry_name_; }

 private:
  friend class CgroupManager;
  CgroupPlacement(CgroupManager& manager, CgroupVersion version, bool threads, std::string run_dir,
                  std::vector<std::string> group_dirs, std::vector<uint32_t> job_group,
                  std::string entry_name);

  CgroupManager& manager_;
  const CgroupVersion version_;
  const bool threads_;
  const std::string run_dir_;
  const std::vector<std::string> group_dirs_;
  const std::vector<uint32_t> job_group_;  // job index -> group index
  const std::string entry_name_;
  bool removed_ = false;
};

// Thread-safe: runs on different devices build and remove their layouts concurrently.
// Outlives every placement it builds.
class CgroupManager {
 public:
  CgroupManager(SettingsJournal& journal, CgroupOptions options);

  // Builds `layout` for a run of `numjobs` jobs (threads: jobs are threads of the agent) in
  // <hierarchy>/<parent>/<run_tag>/<group name>: journals the directories it will create,
  // creates them, and sets each group's weight (v1 blkio.bfq.weight; v2 io.bfq.weight if the
  // kernel offers it, else io.weight). A weight of 100 that the hierarchy cannot set (e.g. bfq
  // not loaded) is left alone: it is every group's default. On error nothing is left behind.
  // Errors: InvalidArgument for a bad layout (workloads::ValidateCgroupLayout: the agent
  // trusts no name it is sent) or run_tag;
  // FailedPrecondition when no I/O cgroup hierarchy is usable, when jobs are threads on cgroup
  // v2 (its io controller is not threaded: a thread cannot be charged to another group than
  // its process), when an existing parent lacks io in its v2 cgroup.subtree_control, or when a
  // weight cannot be set; AlreadyExists if the run's directory exists; else the errno status.
  // `job_group` (common/cell_jobs.h ThreadGroups) gives each job's group index when a cell's
  // named jobs name their groups; empty = jobs fill the groups in layout order. It must have
  // numjobs entries, each a group of the layout (InvalidArgument otherwise).
  absl::StatusOr<std::unique_ptr<CgroupPlacement>> Build(
      const std::string& run_tag, const v1::CgroupLayout& layout, uint32_t numjobs, bool threads,
      const std::vector<uint32_t>& job_group = {});

 private:
  friend class CgroupPlacement;
  absl::Status RemoveEntry(const std::string& entry_name, const std::string& parent_dir);
  absl::Status CreateDirs(const IoHierarchy& h, const std::string& parent_dir, bool make_parent,
                          const std::string& run_dir, const std::vector<std::string>& group_dirs,
                          const v1::CgroupLayout& layout);

  SettingsJournal& journal_;
  const CgroupOptions options_;
  absl::Mutex mutex_;  // parent creation and removal vs. concurrent runs
  bool created_parent_ ABSL_GUARDED_BY(mutex_) = false;
};

}  // namespace blkbench

#endif  // BLKBENCH_AGENT_CGROUP_CGROUP_MANAGER_H_
