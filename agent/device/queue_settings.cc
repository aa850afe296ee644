// Journaled application of sysfs queue settings; see queue_settings.h.
#include "agent/device/queue_settings.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/iosched_tunables.h"

namespace blkbench {
namespace {

constexpr absl::string_view kEntryPrefix = "queue-";

// Writes `value` to queue attribute `attr` unless it already holds it, then reads it back:
// the kernel silently clamps some values (nr_requests below BLKDEV_MIN_RQ, max_sectors_kb
// above the hardware limit in newer kernels), which must not pass as applied.
absl::Status SetNumber(const std::string& disk, const std::string& queue, const char* attr,
                       uint32_t value) {
  const std::string path = absl::StrCat(queue, "/", attr);
  absl::StatusOr<uint64_t> before = ReadUintAttribute(path);
  if (!before.ok()) return before.status();
  if (*before == value) return absl::OkStatus();
  absl::Status written = WriteAttribute(path, absl::StrCat(value));
  if (!written.ok()) {
    return absl::Status(written.code(), absl::StrCat(disk, ": the kernel refused ", attr, "=",
                                                     value, " (", written.message(), ")"));
  }
  absl::StatusOr<uint64_t> after = ReadUintAttribute(path);
  if (!after.ok()) return after.status();
  if (*after != value) {
    return absl::InvalidArgumentError(
        absl::StrCat(disk, ": the kernel clamped ", attr, " ", value, " to ", *after));
  }
  return absl::OkStatus();
}

absl::Status SetScheduler(const std::string& disk, const std::string& queue,
                          const std::string& wanted) {
  const std::string path = queue + "/scheduler";
  absl::Status written = WriteAttribute(path, wanted);
  if (!written.ok()) {
    return absl::Status(written.code(), absl::StrCat(disk, ": the kernel refused scheduler ",
                                                     wanted, " (", written.message(), ")"));
  }
  absl::StatusOr<std::string> text = ReadAttribute(path);
  if (!text.ok()) return text.status();
  absl::StatusOr<SchedulerList> now = ParseSchedulers(*text);
  if (!now.ok()) return now.status();
  if (now->current != wanted) {
    return absl::InternalError(
        absl::StrCat(disk, ": scheduler is \"", now->current, "\" after writing \"", wanted, "\""));
  }
  return absl::OkStatus();
}

// Where `name` goes when tunables are written back: common/iosched_tunables.h's order
// (bfq's strict_guarantees before slice_idle, which turning it on raises), files it does
// not know after them.
size_t WriteRank(const std::string& name) {
  const std::span<const IoschedTunableDef> defs = IoschedTunables();
  for (size_t i = 0; i < defs.size(); ++i) {
    if (defs[i].name == name) return i;
  }
  return defs.size();
}

// The scheduler's writable tunables (queue/iosched/*): switching elevators away and back
// resets them to defaults, so an admin's tuning is saved too. In write-back order.
std::vector<SavedValue> SavedIoschedTunables(const std::string& queue) {
  std::vector<SavedValue> tunables;
  const std::string dir = queue + "/iosched";
  absl::StatusOr<std::vector<std::string>> names = ListDirectory(dir);
  if (!names.ok()) return tunables;
  std::stable_sort(names->begin(), names->end(), [](const std::string& a, const std::string& b) {
    return WriteRank(a) < WriteRank(b);
  });
  for (const std::string& name : *names) {
    const std::string path = absl::StrCat(dir, "/", name);
    struct stat st;
    if (stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || (st.st_mode & S_IWUSR) == 0) {
      continue;
    }
    absl::StatusOr<std::string> value = ReadAttribute(path);
    if (value.ok()) tunables.push_back({path, *value});
  }
  return tunables;
}

// Writes the cell's tunables to iosched/ of the scheduler now in force, in the table's
// order, then reads every one back: the kernel's store functions clamp silently (and a
// jiffies value rounds on a kernel with HZ below 1000), which must not pass as applied.
absl::Status SetIoschedTunables(const std::string& disk, const std::string& queue,
                                const std::string& scheduler, const v1::QueueSettings& wanted) {
  std::vector<const IoschedTunableDef*> set;
  for (const IoschedTunableDef& def : IoschedTunables()) {
    if (wanted.iosched().count(std::string(def.name)) != 0) set.push_back(&def);
  }
  for (const IoschedTunableDef* def : set) {
    const std::string name(def->name);
    const std::string path = absl::StrCat(queue, "/iosched/", name);
    const std::string& value = wanted.iosched().at(name);
    if (!PathExists(path)) {
      return absl::InvalidArgumentError(absl::StrCat(
          disk, ": this kernel's ", scheduler, " has no iosched/", name,
          def->since != 0
              ? absl::StrCat(" (it came with ", def->since / 100, ".", def->since % 100, ")")
              : std::string()));
    }
    absl::Status written = WriteAttribute(path, value);
    if (!written.ok()) {
      return absl::Status(written.code(), absl::StrCat(disk, ": the kernel refused ", name, "=",
                                                       value, " (", written.message(), ")"));
    }
  }
  for (const IoschedTunableDef* def : set) {
    const std::string name(def->name);
    const std::string& value = wanted.iosched().at(name);
    absl::StatusOr<std::string> now = ReadAttribute(absl::StrCat(queue, "/iosched/", name));
    if (!now.ok()) return now.status();
    if (*now != value) {
      return absl::InvalidArgumentError(
          absl::StrCat(disk, ": the kernel made ", name, " ", value, " into ", *now,
                       def->unit == "ms" ? " (a time kept in jiffies: HZ is below 1000)" : ""));
    }
  }
  return absl::OkStatus();
}

absl::Status ReadBack(const std::string& queue, v1::QueueSettings* applied) {
  absl::StatusOr<std::string> text = ReadAttribute(queue + "/scheduler");
  if (text.ok()) {
    absl::StatusOr<SchedulerList> schedulers = ParseSchedulers(*text);
    if (!schedulers.ok()) return schedulers.status();
    applied->set_scheduler(schedulers->current);
  }
  absl::StatusOr<uint64_t> nr_requests = ReadUintAttribute(queue + "/nr_requests");
  if (!nr_requests.ok()) return nr_requests.status();
  applied->set_nr_requests(static_cast<uint32_t>(*nr_requests));
  absl::StatusOr<uint64_t> max_sectors_kb = ReadUintAttribute(queue + "/max_sectors_kb");
  if (!max_sectors_kb.ok()) return max_sectors_kb.status();
  applied->set_max_sectors_kb(static_cast<uint32_t>(*max_sectors_kb));
  ReadIoschedValues(queue, applied->mutable_iosched());
  return absl::OkStatus();
}

// Rejects wanted values that can be judged before anything is changed.
absl::Status Validate(const std::string& disk, const std::string& queue,
                      const SchedulerList& schedulers, const v1::QueueSettings& wanted) {
  if (!wanted.scheduler().empty() &&
      std::find(schedulers.available.begin(), schedulers.available.end(), wanted.scheduler()) ==
          schedulers.available.end()) {
    return absl::InvalidArgumentError(
        absl::StrCat("scheduler \"", wanted.scheduler(), "\" is not available on ", disk,
                     " (available: ", absl::StrJoin(schedulers.available, ", "),
                     "; a scheduler built as a module is listed once loaded, e.g. modprobe bfq)"));
  }
  if (!wanted.iosched().empty()) {
    // The parser's checks again, against the scheduler that will be in force: a cell may
    // have been made by something other than the matrix parser.
    v1::QueueSettings in_force = wanted;
    if (in_force.scheduler().empty()) in_force.set_scheduler(schedulers.current);
    std::vector<IoschedProblem> problems = CheckIoschedTunables(in_force, 0, false);
    if (!problems.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(disk, ": ", problems.front().message));
    }
    for (const auto& [name, value] : wanted.iosched()) {
      const IoschedTunableDef* def = FindIoschedTunable(name);
      if (def == nullptr || CanonicalIoschedValue(*def, value) != value) {
        return absl::InvalidArgumentError(
            absl::StrCat(disk, ": iosched tunable ", name, " = \"", value, "\" is not ",
                         def == nullptr ? "a known tunable" : IoschedTunableExpected(*def)));
      }
    }
  }
  if (wanted.max_sectors_kb() != 0) {
    absl::StatusOr<uint64_t> max_hw = ReadUintAttribute(queue + "/max_hw_sectors_kb");
    if (!max_hw.ok()) return max_hw.status();
    const uint64_t page_kb = static_cast<uint64_t>(sysconf(_SC_PAGESIZE)) / 1024;
    if (wanted.max_sectors_kb() > *max_hw || wanted.max_sectors_kb() < page_kb) {
      return absl::InvalidArgumentError(
          absl::StrCat("max_sectors_kb ", wanted.max_sectors_kb(), " is outside ", page_kb, "..",
                       *max_hw, " for ", disk, " (page size .. max_hw_sectors_kb)"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

void ReadIoschedValues(const std::string& queue,
                       google::protobuf::Map<std::string, std::string>* out) {
  const std::string dir = queue + "/iosched";
  absl::StatusOr<std::vector<std::string>> names = ListDirectory(dir);
  if (!names.ok()) return;
  for (const std::string& name : *names) {
    const std::string path = absl::StrCat(dir, "/", name);
    struct stat st;
    if (stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    if (absl::StatusOr<std::string> value = ReadAttribute(path); value.ok()) {
      (*out)[name] = *std::move(value);
    }
  }
}

absl::StatusOr<std::unique_ptr<QueueSettingsJournal>> QueueSettingsJournal::Open(
    const std::string& state_dir, const SystemPaths& paths, std::vector<std::string> extra_roots,
    RemoveDirFn remove_dir) {
  SystemPaths canonical = paths;
  // Journaled paths are canonical sysfs paths, so the allowed root must be canonical too.
  if (char* resolved = realpath(paths.sysfs.c_str(), nullptr)) {
    canonical.sysfs = resolved;
    free(resolved);
  }
  std::vector<std::string> roots = {canonical.sysfs};
  for (std::string& root : extra_roots) roots.push_back(std::move(root));
  absl::StatusOr<std::unique_ptr<SettingsJournal>> journal =
      SettingsJournal::Open(state_dir, std::move(roots), canonical, std::move(remove_dir));
  if (!journal.ok()) return journal.status();
  return std::unique_ptr<QueueSettingsJournal>(
      new QueueSettingsJournal(std::move(canonical), *std::move(journal)));
}

QueueSettingsJournal::QueueSettingsJournal(SystemPaths paths,
                                           std::unique_ptr<SettingsJournal> journal)
    : paths_(std::move(paths)), journal_(std::move(journal)) {}

absl::StatusOr<std::string> QueueSettingsJournal::DiskDir(const std::string& kernel_name) const {
  absl::StatusOr<std::string> dir = BlockSysfsDirByName(paths_, kernel_name);
  if (!dir.ok()) return dir.status();
  return QueueOwnerDir(*dir);
}

absl::StatusOr<std::string> QueueSettingsJournal::EntryName(const std::string& kernel_name) const {
  absl::StatusOr<std::string> disk_dir = DiskDir(kernel_name);
  if (!disk_dir.ok()) return disk_dir.status();
  return absl::StrCat(kEntryPrefix, Basename(*disk_dir));
}

absl::Status QueueSettingsJournal::Apply(const v1::DeviceFacts& dev,
                                         const v1::QueueSettings& wanted,
                                         v1::QueueSettings* applied) {
  applied->Clear();
  if (!dev.is_block()) return absl::OkStatus();
  absl::StatusOr<std::string> disk_dir = DiskDir(dev.kernel_name());
  if (!disk_dir.ok()) return disk_dir.status();
  const std::string disk = Basename(*disk_dir);
  const std::string queue = *disk_dir + "/queue";
  const std::string name = absl::StrCat(kEntryPrefix, disk);

  SchedulerList schedulers;
  if (absl::StatusOr<std::string> text = ReadAttribute(queue + "/scheduler"); text.ok()) {
    absl::StatusOr<SchedulerList> parsed = ParseSchedulers(*text);
    if (!parsed.ok()) return parsed.status();
    schedulers = *std::move(parsed);
  }
  // Checked first because it is the root cause: the originals it saved are the true ones.
  if (journal_->Contains(name)) {
    return absl::FailedPreconditionError(absl::StrCat(
        disk, " still has queue settings from an earlier run that were not restored (journal ",
        journal_->dir(), "/", name, ".journal)"));
  }
  if (absl::Status status = Validate(disk, queue, schedulers, wanted); !status.ok()) {
    return status;
  }
  // Journal exactly what will change, directly or as a side effect: a new elevator resets
  // nr_requests and its tunables, and a depth change recomputes some tunables (mq-deadline's
  // async_depth). Nothing else is written back later (bio-based queues refuse nr_requests).
  const bool change_scheduler =
      !wanted.scheduler().empty() && wanted.scheduler() != schedulers.current;
  const bool change_depth = change_scheduler || wanted.nr_requests() != 0;
  const bool change_tunables = !wanted.iosched().empty();
  if (!change_depth && !change_tunables && wanted.max_sectors_kb() == 0) {
    return ReadBack(queue, applied);
  }

  JournalEntry entry;
  entry.name = name;
  absl::StatusOr<std::string> dev_number = ReadAttribute(*disk_dir + "/dev");
  if (!dev_number.ok()) return dev_number.status();
  entry.guards.push_back({*disk_dir + "/dev", *dev_number});
  auto save = [&](const char* attr) -> absl::Status {
    const std::string path = absl::StrCat(queue, "/", attr);
    absl::StatusOr<std::string> value = ReadAttribute(path);
    if (!value.ok()) return value.status();
    entry.originals.push_back({path, *value});
    return absl::OkStatus();
  };
  // Restore order matters and is this order: scheduler, nr_requests, tunables, max_sectors_kb.
  if (change_scheduler) entry.originals.push_back({queue + "/scheduler", schedulers.current});
  if (change_depth) {
    if (absl::Status status = save("nr_requests"); !status.ok()) return status;
  }
  if (change_depth || change_tunables) {
    for (SavedValue& tunable : SavedIoschedTunables(queue)) {
      entry.originals.push_back(std::move(tunable));
    }
  }
  if (wanted.max_sectors_kb() != 0) {
    if (absl::Status status = save("max_sectors_kb"); !status.ok()) return status;
  }
  if (absl::Status status = journal_->Record(entry); !status.ok()) {
    if (absl::IsAlreadyExists(status)) {
      return absl::FailedPreconditionError(absl::StrCat(
          disk, " still has queue settings from an earlier run that were not restored (",
          status.message(), ")"));
    }
    return status;
  }

  absl::Status status = absl::OkStatus();
  if (change_scheduler) status = SetScheduler(disk, queue, wanted.scheduler());
  if (status.ok() && wanted.nr_requests() != 0) {
    status = SetNumber(disk, queue, "nr_requests", wanted.nr_requests());
  }
  if (status.ok() && change_tunables) {
    const std::string& in_force =
        wanted.scheduler().empty() ? schedulers.current : wanted.scheduler();
    status = SetIoschedTunables(disk, queue, in_force, wanted);
  }
  if (status.ok() && wanted.max_sectors_kb() != 0) {
    status = SetNumber(disk, queue, "max_sectors_kb", wanted.max_sectors_kb());
  }
  if (status.ok()) status = ReadBack(queue, applied);
  if (!status.ok()) {
    applied->Clear();
    if (absl::Status rollback = journal_->Restore(name); !rollback.ok()) {
      return absl::Status(
          status.code(),
          absl::StrCat(status.message(), "; rolling back failed too: ", rollback.message()));
    }
    return status;
  }
  return absl::OkStatus();
}

absl::Status QueueSettingsJournal::Restore(const std::string& kernel_name) {
  absl::StatusOr<std::string> name = EntryName(kernel_name);
  // A device that is gone can still have an entry; restoring finds it stale and drops it.
  if (!name.ok()) {
    if (!IsSafeKernelName(kernel_name)) return name.status();
    name = absl::StrCat(kEntryPrefix, kernel_name);
  }
  return journal_->Restore(*name);
}

absl::StatusOr<RecoveryReport> QueueSettingsJournal::RecoverAll() { return journal_->RecoverAll(); }

}  // namespace blkbench
