// Building and removing runs' cgroup layouts; see cgroup_manager.h. Kernel interfaces:
// Documentation/admin-guide/cgroup-v2.rst ("io.weight", "io.bfq.weight", "Threads"),
// Documentation/admin-guide/cgroup-v1/blkio-controller.rst, block/bfq-cgroup.c
// (bfq_io_set_weight accepts "N" and "default N"; bfq_io_show_weight prints "default N").
#include "agent/cgroup/cgroup_manager.h"

#include <sys/stat.h>
#include <sys/types.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "workloads/cgroup_layout.h"

namespace blkbench {
namespace {

constexpr uint32_t kKernelDefaultWeight = 100;  // CGROUP_WEIGHT_DFL, BFQ_DEFAULT_GRP_WEIGHT

bool IsValidRunTag(absl::string_view tag) {
  if (tag.empty() || tag.size() > 100 || tag[0] == '.') return false;
  for (char c : tag) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_') return false;
  }
  return true;
}

absl::Status MakeDir(const MakeDirFn& make_dir, const std::string& path) {
  const int err = make_dir(path);
  if (err == 0) return absl::OkStatus();
  return absl::ErrnoToStatus(err, absl::StrCat("creating cgroup ", path));
}

// v2 only: lets `dir`'s children have io.* files (cgroup-v2.rst "Enabling and Disabling").
absl::Status EnableIo(const std::string& dir) {
  return WriteAttribute(absl::StrCat(dir, "/cgroup.subtree_control"), "+io");
}

// "100", or v2's "default 100\n8:16 200": the default weight.
absl::StatusOr<uint32_t> ParseWeight(absl::string_view text) {
  absl::string_view first = text.substr(0, text.find('\n'));
  first = absl::StripAsciiWhitespace(first);
  absl::ConsumePrefix(&first, "default");
  uint32_t weight = 0;
  if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(first), &weight)) {
    return absl::InternalError(absl::StrCat("unexpected weight \"", text, "\""));
  }
  return weight;
}

// Sets `group`'s weight through the hierarchy's weight file and reads it back.
absl::Status SetWeight(CgroupVersion version, const std::string& group, uint32_t weight) {
  std::string file;
  if (version == CgroupVersion::kV1) {
    file = group + "/blkio.bfq.weight";
  } else {
    file = group + "/io.bfq.weight";
    if (!PathExists(file)) file = group + "/io.weight";
  }
  if (!PathExists(file)) {
    if (weight == kKernelDefaultWeight) return absl::OkStatus();
    return absl::FailedPreconditionError(absl::StrCat(
        "cannot set weight ", weight, ": ", group, " has no ",
        version == CgroupVersion::kV1 ? "blkio.bfq.weight" : "io.bfq.weight or io.weight",
        " (weights need the bfq scheduler with group scheduling, CONFIG_BFQ_GROUP_IOSCHED",
        version == CgroupVersion::kV2 ? ", or blk-iocost" : "", "; use scheduler: bfq)"));
  }
  if (absl::Status s = WriteAttribute(file, absl::StrCat(weight)); !s.ok()) return s;
  absl::StatusOr<std::string> text = ReadAttribute(file);
  if (!text.ok()) return text.status();
  absl::StatusOr<uint32_t> now = ParseWeight(*text);
  if (!now.ok()) return absl::InternalError(absl::StrCat(file, ": ", now.status().message()));
  if (*now != weight) {
    return absl::InternalError(absl::StrCat(file, " reads ", *now, " after writing ", weight));
  }
  return absl::OkStatus();
}

}  // namespace

CgroupPlacement::CgroupPlacement(CgroupManager& manager, CgroupVersion version, bool threads,
                                 std::string run_dir, std::vector<std::string> group_dirs,
                                 std::vector<uint32_t> job_group, std::string entry_name)
    : manager_(manager),
      version_(version),
      threads_(threads),
      run_dir_(std::move(run_dir)),
      group_dirs_(std::move(group_dirs)),
      job_group_(std::move(job_group)),
      entry_name_(std::move(entry_name)) {}

CgroupPlacement::~CgroupPlacement() { Remove().IgnoreError(); }

absl::Status CgroupPlacement::Place(uint32_t job, int tid) {
  if (job >= job_group_.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("job ", job, " is not in the cgroup layout (", job_group_.size(), " jobs)"));
  }
  // v1 lets single threads move (tasks); cgroup.procs moves a whole process, in both versions.
  const char* file = threads_ && version_ == CgroupVersion::kV1 ? "tasks" : "cgroup.procs";
  const std::string& group = group_dirs_[job_group_[job]];
  absl::Status s = WriteAttribute(absl::StrCat(group, "/", file), absl::StrCat(tid));
  if (!s.ok()) {
    return absl::Status(s.code(),
                        absl::StrCat("placing job ", job, " (", threads_ ? "tid " : "pid ", tid,
                                     ") in cgroup ", group, ": ", s.message()));
  }
  return absl::OkStatus();
}

absl::Status CgroupPlacement::Remove() {
  if (removed_) return absl::OkStatus();
  absl::Status s = manager_.RemoveEntry(entry_name_, run_dir_.substr(0, run_dir_.rfind('/')));
  if (s.ok()) removed_ = true;
  return s;
}

static CgroupOptions WithDefaults(CgroupOptions options) {
  if (options.make_dir == nullptr) {
    options.make_dir = [](const std::string& path) {
      return mkdir(path.c_str(), 0755) == 0 ? 0 : errno;
    };
  }
  return options;
}

CgroupManager::CgroupManager(SettingsJournal& journal, CgroupOptions options)
    : journal_(journal), options_(WithDefaults(std::move(options))) {}

absl::Status CgroupManager::RemoveEntry(const std::string& entry_name,
                                        const std::string& parent_dir) {
  absl::MutexLock lock(&mutex_);
  absl::Status s = journal_.Restore(entry_name);
  if (created_parent_ && !PathExists(parent_dir)) created_parent_ = false;
  return s;
}

absl::Status CgroupManager::CreateDirs(const IoHierarchy& h, const std::string& parent_dir,
                                       bool make_parent, const std::string& run_dir,
                                       const std::vector<std::string>& group_dirs,
                                       const v1::CgroupLayout& layout) {
  const bool v2 = h.version == CgroupVersion::kV2;
  if (make_parent) {
    const int err = options_.make_dir(parent_dir);
    if (err != 0 && err != EEXIST) {
      return absl::ErrnoToStatus(err, absl::StrCat("creating cgroup ", parent_dir));
    }
    if (v2) {
      if (absl::Status s = EnableIo(parent_dir); !s.ok()) return s;
    }
  }
  if (absl::Status s = MakeDir(options_.make_dir, run_dir); !s.ok()) return s;
  if (v2) {
    if (absl::Status s = EnableIo(run_dir); !s.ok()) return s;
  }
  for (size_t i = 0; i < group_dirs.size(); ++i) {
    if (absl::Status s = MakeDir(options_.make_dir, group_dirs[i]); !s.ok()) return s;
    const uint32_t weight = layout.groups(static_cast<int>(i)).weight();
    if (absl::Status s = SetWeight(h.version, group_dirs[i], weight); !s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<CgroupPlacement>> CgroupManager::Build(
    const std::string& run_tag, const v1::CgroupLayout& layout, uint32_t numjobs, bool threads,
    const std::vector<uint32_t>& given_groups) {
  if (!IsValidRunTag(run_tag)) {
    return absl::InvalidArgumentError(absl::StrCat("bad cgroup run tag \"", run_tag, "\""));
  }
  if (absl::Status s = workloads::ValidateCgroupLayout(layout, numjobs); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("cgroup layout: ", s.message()));
  }
  if (layout.kind() == v1::CgroupLayout::ROOT) {
    return absl::InvalidArgumentError("a root cgroup layout has nothing to build");
  }
  absl::StatusOr<IoHierarchy> h = FindIoHierarchy(options_.paths, options_.parent);
  if (!h.ok()) return h.status();
  const bool v2 = h->version == CgroupVersion::kV2;
  if (threads && v2) {
    return absl::FailedPreconditionError(
        "cgroup v2's io controller is not threaded, so jobs as threads (thread=1) cannot be put "
        "in separate io cgroups; run the cell with thread=0 (processes, fio's default) or "
        "cgroup: root");
  }

  const std::string parent_dir = absl::StrCat(h->mount_point, "/", options_.parent);
  const std::string run_dir = absl::StrCat(parent_dir, "/", run_tag);
  std::vector<std::string> group_dirs;
  std::vector<uint32_t> job_group;
  for (int g = 0; g < layout.groups_size(); ++g) {
    group_dirs.push_back(absl::StrCat(run_dir, "/", layout.groups(g).name()));
    job_group.insert(job_group.end(), layout.groups(g).jobs(), static_cast<uint32_t>(g));
  }
  if (!given_groups.empty()) {
    const bool fits = given_groups.size() == numjobs &&
                      std::all_of(given_groups.begin(), given_groups.end(), [&](uint32_t g) {
                        return g < static_cast<uint32_t>(layout.groups_size());
                      });
    if (!fits) {
      return absl::InvalidArgumentError(absl::StrCat(
          "cgroup layout: the jobs' groups (", given_groups.size(), " jobs) do not fit its ",
          layout.groups_size(), " groups and ", numjobs, " jobs"));
    }
    job_group = given_groups;
  }

  absl::MutexLock lock(&mutex_);
  const bool parent_exists = PathExists(parent_dir);
  if (created_parent_ && !parent_exists) created_parent_ = false;
  // A parent someone else made is theirs: it must already pass io down, and it stays.
  if (parent_exists && !created_parent_ && v2) {
    absl::StatusOr<std::string> enabled = ReadAttribute(parent_dir + "/cgroup.subtree_control");
    if (!enabled.ok()) return enabled.status();
    std::vector<absl::string_view> controllers = absl::StrSplit(*enabled, ' ');
    if (std::find(controllers.begin(), controllers.end(), "io") == controllers.end()) {
      return absl::FailedPreconditionError(
          absl::StrCat("cgroup parent ", parent_dir,
                       " exists without io in its "
                       "cgroup.subtree_control; enable it (echo +io > ",
                       parent_dir, "/cgroup.subtree_control) or remove it"));
    }
  }
  if (PathExists(run_dir)) {
    return absl::AlreadyExistsError(absl::StrCat("cgroup ", run_dir, " already exists"));
  }

  // Journal first: a crash after any mkdir below leaves an entry that removes it.
  JournalEntry entry;
  entry.name = absl::StrCat("cgroup-", run_tag);
  const std::string tasks_file = v2 ? "cgroup.procs" : "tasks";
  for (const std::string& dir : group_dirs) entry.cgroups.push_back({dir, tasks_file, h->own_dir});
  entry.cgroups.push_back({run_dir, tasks_file, h->own_dir});
  const bool make_parent = !parent_exists;
  if (make_parent || created_parent_) {
    entry.cgroups.push_back({parent_dir, tasks_file, h->own_dir, /*shared=*/true});
  }
  if (absl::Status s = journal_.Record(entry); !s.ok()) return s;
  if (make_parent) created_parent_ = true;

  absl::Status created = CreateDirs(*h, parent_dir, make_parent, run_dir, group_dirs, layout);
  if (!created.ok()) {
    absl::Status undone = journal_.Restore(entry.name);
    if (created_parent_ && !PathExists(parent_dir)) created_parent_ = false;
    if (!undone.ok()) {
      return absl::Status(
          created.code(),
          absl::StrCat(created.message(), "; removing the groups: ", undone.message()));
    }
    return created;
  }
  return std::unique_ptr<CgroupPlacement>(new CgroupPlacement(*this, h->version, threads, run_dir,
                                                              std::move(group_dirs),
                                                              std::move(job_group), entry.name));
}

}  // namespace blkbench
