// Durable settings journal; see settings_journal.h. File format (version 1):
//   blkbench-settings-journal 1
//   name<TAB>queue-loop0
//   boot_id<TAB>c950d506-...
//   guard<TAB>/sys/class/block/loop0/dev<TAB>7:0
//   restore<TAB>/sys/class/block/loop0/queue/scheduler<TAB>mq-deadline
//   cgroup<TAB>/sys/fs/cgroup/blkio/blkbench/run-7-1/g0<TAB>tasks<TAB>/sys/fs/cgroup/blkio<TAB>0
//   end
// Fields are absl::CEscape'd, so a tab or newline inside a value cannot break the framing; a
// missing "end" line means the file is truncated (it never should be: it is renamed into place).
#include "agent/device/settings_journal.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace blkbench {
namespace {

constexpr absl::string_view kHeader = "blkbench-settings-journal 1";
constexpr absl::string_view kSuffix = ".journal";
constexpr absl::string_view kTempSuffix = ".tmp";
constexpr absl::string_view kLockName = ".lock";

bool IsValidEntryName(absl::string_view name) {
  if (name.empty() || name.size() > 200 || name[0] == '.') return false;
  for (char c : name) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-' &&
        c != ':') {
      return false;
    }
  }
  return true;
}

absl::Status FsyncDir(const std::string& dir) {
  int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return absl::ErrnoToStatus(errno, absl::StrCat("open ", dir));
  int rc = fsync(fd);
  int err = errno;
  close(fd);
  if (rc != 0) return absl::ErrnoToStatus(err, absl::StrCat("fsync ", dir));
  return absl::OkStatus();
}

// Write to a temp file, fsync it, rename over `path`, fsync the directory: after a crash the
// file is either absent or complete.
absl::Status WriteFileDurably(const std::string& dir, const std::string& path,
                              const std::string& content) {
  const std::string temp = absl::StrCat(dir, "/.", Basename(path), kTempSuffix);
  int fd = open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return absl::ErrnoToStatus(errno, absl::StrCat("create ", temp));
  size_t done = 0;
  while (done < content.size()) {
    ssize_t n = write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      close(fd);
      unlink(temp.c_str());
      return absl::ErrnoToStatus(err, absl::StrCat("write ", temp));
    }
    done += static_cast<size_t>(n);
  }
  if (fsync(fd) != 0) {
    int err = errno;
    close(fd);
    unlink(temp.c_str());
    return absl::ErrnoToStatus(err, absl::StrCat("fsync ", temp));
  }
  close(fd);
  if (rename(temp.c_str(), path.c_str()) != 0) {
    int err = errno;
    unlink(temp.c_str());
    return absl::ErrnoToStatus(err, absl::StrCat("rename ", temp, " to ", path));
  }
  return FsyncDir(dir);
}

// True for an absolute path without empty, "." or ".." components.
bool IsPlainAbsolutePath(absl::string_view path) {
  if (path.empty() || path[0] != '/') return false;
  for (absl::string_view part : absl::StrSplit(path.substr(1), '/')) {
    if (part.empty() || part == "." || part == "..") return false;
  }
  return true;
}

}  // namespace

std::string SerializeJournalEntry(const JournalEntry& entry) {
  std::string out = absl::StrCat(kHeader, "\n");
  absl::StrAppend(&out, "name\t", absl::CEscape(entry.name), "\n");
  absl::StrAppend(&out, "boot_id\t", absl::CEscape(entry.boot_id), "\n");
  for (const SavedValue& guard : entry.guards) {
    absl::StrAppend(&out, "guard\t", absl::CEscape(guard.path), "\t", absl::CEscape(guard.value),
                    "\n");
  }
  for (const SavedValue& original : entry.originals) {
    absl::StrAppend(&out, "restore\t", absl::CEscape(original.path), "\t",
                    absl::CEscape(original.value), "\n");
  }
  for (const CgroupDir& dir : entry.cgroups) {
    absl::StrAppend(&out, "cgroup\t", absl::CEscape(dir.path), "\t", absl::CEscape(dir.tasks_file),
                    "\t", absl::CEscape(dir.evacuate_to), "\t", dir.shared ? "1" : "0", "\n");
  }
  for (const ConfigfsItem& item : entry.configfs_items) {
    absl::StrAppend(&out, "configfs\t", absl::CEscape(item.path), "\t",
                    absl::CEscape(item.power_file), "\n");
  }
  absl::StrAppend(&out, "end\n");
  return out;
}

absl::StatusOr<JournalEntry> ParseJournalEntry(absl::string_view text) {
  std::vector<absl::string_view> lines = absl::StrSplit(text, '\n');
  if (lines.empty() || lines[0] != kHeader) {
    return absl::DataLossError("not a blkbench settings journal (bad header)");
  }
  JournalEntry entry;
  bool ended = false;
  for (size_t i = 1; i < lines.size(); ++i) {
    if (lines[i].empty() && i + 1 == lines.size()) continue;  // after the final newline
    if (ended) {
      return absl::DataLossError("data after the \"end\" line");
    }
    std::vector<absl::string_view> fields = absl::StrSplit(lines[i], '\t');
    std::vector<std::string> values(fields.size() - 1);
    for (size_t f = 1; f < fields.size(); ++f) {
      if (!absl::CUnescape(fields[f], &values[f - 1])) {
        return absl::DataLossError(absl::StrCat("bad escape on line ", i + 1));
      }
    }
    if (fields[0] == "end" && values.empty()) {
      ended = true;
    } else if (fields[0] == "name" && values.size() == 1) {
      entry.name = values[0];
    } else if (fields[0] == "boot_id" && values.size() == 1) {
      entry.boot_id = values[0];
    } else if (fields[0] == "guard" && values.size() == 2) {
      entry.guards.push_back({values[0], values[1]});
    } else if (fields[0] == "restore" && values.size() == 2) {
      entry.originals.push_back({values[0], values[1]});
    } else if (fields[0] == "cgroup" && values.size() == 4 &&
               (values[3] == "0" || values[3] == "1")) {
      entry.cgroups.push_back({values[0], values[1], values[2], values[3] == "1"});
    } else if (fields[0] == "configfs" && values.size() == 2) {
      entry.configfs_items.push_back({values[0], values[1]});
    } else {
      return absl::DataLossError(absl::StrCat("unexpected line ", i + 1, ": \"", lines[i], "\""));
    }
  }
  if (!ended) return absl::DataLossError("truncated (no \"end\" line)");
  return entry;
}

absl::StatusOr<std::unique_ptr<SettingsJournal>> SettingsJournal::Open(
    const std::string& state_dir, std::vector<std::string> allowed_roots, const SystemPaths& paths,
    RemoveDirFn remove_dir) {
  if (mkdir(state_dir.c_str(), 0700) != 0 && errno != EEXIST) {
    return absl::ErrnoToStatus(errno, absl::StrCat("create journal directory ", state_dir));
  }
  struct stat st;
  if (lstat(state_dir.c_str(), &st) != 0) {
    return absl::ErrnoToStatus(errno, absl::StrCat("stat ", state_dir));
  }
  // Like sshd's StrictModes: whoever can write here can make us write to the kernel.
  if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 022) != 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "journal directory ", state_dir,
        " must be a directory owned by this user and not writable by group or others"));
  }
  const std::string lock_path = absl::StrCat(state_dir, "/", kLockName);
  int lock_fd = open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (lock_fd < 0) return absl::ErrnoToStatus(errno, absl::StrCat("open ", lock_path));
  if (flock(lock_fd, LOCK_EX | LOCK_NB) != 0) {
    int err = errno;
    close(lock_fd);
    if (err == EWOULDBLOCK) {
      return absl::FailedPreconditionError(
          absl::StrCat("journal directory ", state_dir, " is in use by another blkbench agent"));
    }
    return absl::ErrnoToStatus(err, absl::StrCat("lock ", lock_path));
  }
  for (std::string& root : allowed_roots) {
    while (root.size() > 1 && root.back() == '/') root.pop_back();
  }
  // A crash between creating a temp file and renaming it leaves the temp behind; nothing was
  // changed for it yet (changes follow a completed Record), so it is just removed.
  absl::StatusOr<std::vector<std::string>> names = ListDirectory(state_dir);
  if (names.ok()) {
    for (const std::string& name : *names) {
      if (name[0] == '.' && absl::EndsWith(name, kTempSuffix)) {
        unlink(absl::StrCat(state_dir, "/", name).c_str());
      }
    }
  }
  absl::StatusOr<std::string> boot_id = ReadAttribute(paths.procfs + "/sys/kernel/random/boot_id");
  if (remove_dir == nullptr) {
    remove_dir = [](const std::string& path) { return rmdir(path.c_str()) == 0 ? 0 : errno; };
  }
  return std::unique_ptr<SettingsJournal>(
      new SettingsJournal(state_dir, lock_fd, std::move(allowed_roots),
                          boot_id.ok() ? *boot_id : std::string(), std::move(remove_dir)));
}

SettingsJournal::SettingsJournal(std::string dir, int lock_fd,
                                 std::vector<std::string> allowed_roots, std::string boot_id,
                                 RemoveDirFn remove_dir)
    : dir_(std::move(dir)),
      lock_fd_(lock_fd),
      allowed_roots_(std::move(allowed_roots)),
      boot_id_(std::move(boot_id)),
      remove_dir_(std::move(remove_dir)) {}

SettingsJournal::~SettingsJournal() { close(lock_fd_); }

std::string SettingsJournal::EntryPath(const std::string& name) const {
  return absl::StrCat(dir_, "/", name, kSuffix);
}

absl::Status SettingsJournal::CheckPath(const std::string& path) const {
  if (IsPlainAbsolutePath(path)) {
    for (const std::string& root : allowed_roots_) {
      if (absl::StartsWith(path, root) && path.size() > root.size() &&
          (root == "/" || path[root.size()] == '/')) {
        return absl::OkStatus();
      }
    }
  }
  return absl::InvalidArgumentError(
      absl::StrCat("journal path ", path, " is not under ", absl::StrJoin(allowed_roots_, " or ")));
}

// Every path an entry names, originals, guards and cgroups alike, must be under an allowed root.
absl::Status SettingsJournal::CheckEntryPaths(const JournalEntry& entry) const {
  for (const auto* list : {&entry.originals, &entry.guards}) {
    for (const SavedValue& saved : *list) {
      if (absl::Status status = CheckPath(saved.path); !status.ok()) return status;
    }
  }
  for (const ConfigfsItem& item : entry.configfs_items) {
    if (absl::Status status = CheckPath(item.path); !status.ok()) return status;
    if (!item.power_file.empty() && item.power_file != absl::StrCat(item.path, "/power")) {
      return absl::InvalidArgumentError(absl::StrCat("journal configfs item ", item.path,
                                                     ": bad power file \"", item.power_file, "\""));
    }
  }
  for (const CgroupDir& dir : entry.cgroups) {
    for (const std::string* path : {&dir.path, &dir.evacuate_to}) {
      if (absl::Status status = CheckPath(*path); !status.ok()) return status;
    }
    if (dir.tasks_file != "tasks" && dir.tasks_file != "cgroup.procs") {
      return absl::InvalidArgumentError(
          absl::StrCat("journal cgroup ", dir.path, ": bad tasks file \"", dir.tasks_file, "\""));
    }
  }
  return absl::OkStatus();
}

absl::Status SettingsJournal::Record(JournalEntry entry) {
  if (!IsValidEntryName(entry.name)) {
    return absl::InvalidArgumentError(absl::StrCat("bad journal entry name \"", entry.name, "\""));
  }
  if (absl::Status status = CheckEntryPaths(entry); !status.ok()) return status;
  entry.boot_id = boot_id_;
  absl::MutexLock lock(&mutex_);
  const std::string path = EntryPath(entry.name);
  if (PathExists(path)) {
    return absl::AlreadyExistsError(absl::StrCat("journal entry ", entry.name,
                                                 " already exists in ", dir_,
                                                 ": its changes have not been restored yet"));
  }
  return WriteFileDurably(dir_, path, SerializeJournalEntry(entry));
}

bool SettingsJournal::Contains(const std::string& name) {
  absl::MutexLock lock(&mutex_);
  return IsValidEntryName(name) && PathExists(EntryPath(name));
}

absl::StatusOr<JournalEntry> SettingsJournal::Load(const std::string& name) {
  absl::MutexLock lock(&mutex_);
  return LoadLocked(name);
}

absl::StatusOr<JournalEntry> SettingsJournal::LoadLocked(const std::string& name) {
  if (!IsValidEntryName(name)) {
    return absl::InvalidArgumentError(absl::StrCat("bad journal entry name \"", name, "\""));
  }
  const std::string path = EntryPath(name);
  absl::StatusOr<std::string> text = ReadWholeFile(path);
  if (!text.ok()) {
    if (absl::IsNotFound(text.status())) {
      return absl::NotFoundError(absl::StrCat("no journal entry ", name, " in ", dir_));
    }
    return text.status();
  }
  absl::StatusOr<JournalEntry> entry = ParseJournalEntry(*text);
  if (!entry.ok()) {
    return absl::DataLossError(absl::StrCat(path, ": ", entry.status().message()));
  }
  if (entry->name != name) {
    return absl::DataLossError(absl::StrCat(path, ": holds entry \"", entry->name, "\""));
  }
  return entry;
}

std::string SettingsJournal::StaleReason(const JournalEntry& entry) const {
  if (!entry.boot_id.empty() && !boot_id_.empty() && entry.boot_id != boot_id_) {
    return absl::StrCat("recorded in an earlier boot (", entry.boot_id,
                        "); the kernel has reset these settings");
  }
  for (const SavedValue& guard : entry.guards) {
    absl::StatusOr<std::string> now = ReadAttribute(guard.path);
    if (!now.ok()) return absl::StrCat(guard.path, " is gone");
    if (*now != absl::StripAsciiWhitespace(guard.value)) {
      return absl::StrCat(guard.path, " reads \"", *now, "\", not \"", guard.value,
                          "\": a different device");
    }
  }
  return "";
}

absl::StatusOr<SettingsJournal::RestoreResult> SettingsJournal::RestoreLocked(
    const std::string& name) {
  absl::StatusOr<JournalEntry> entry = LoadLocked(name);
  if (absl::IsNotFound(entry.status())) return RestoreResult{RestoreResult::kAbsent, ""};
  if (!entry.ok()) return entry.status();
  if (absl::Status status = CheckEntryPaths(*entry); !status.ok()) {
    return absl::PermissionDeniedError(
        absl::StrCat(EntryPath(name), ": refusing to restore: ", status.message()));
  }
  if (std::string why = StaleReason(*entry); !why.empty()) {
    if (absl::Status status = RemoveLocked(name); !status.ok()) return status;
    return RestoreResult{RestoreResult::kStale, why};
  }
  std::vector<std::string> errors;
  // Devices first: their jobs' cgroups and queue settings outlive them.
  for (const ConfigfsItem& item : entry->configfs_items) {
    absl::Status status = RemoveConfigfsItem(item, remove_dir_);
    if (!status.ok()) errors.emplace_back(status.message());
  }
  // Groups next: a parent's settings (e.g. cgroup.subtree_control) may only change back once
  // its children are gone.
  for (const CgroupDir& dir : entry->cgroups) {
    absl::Status status = RemoveCgroupDir(dir, remove_dir_);
    if (!status.ok()) errors.emplace_back(status.message());
  }
  for (const SavedValue& original : entry->originals) {
    absl::Status status = WriteAttribute(original.path, original.value);
    if (!status.ok()) errors.emplace_back(status.message());
  }
  if (!errors.empty()) {
    return absl::Status(absl::StatusCode::kInternal,
                        absl::StrCat("restoring ", name, " failed (entry kept in ", dir_,
                                     "): ", absl::StrJoin(errors, "; ")));
  }
  if (absl::Status status = RemoveLocked(name); !status.ok()) return status;
  return RestoreResult{RestoreResult::kRestored, ""};
}

absl::Status SettingsJournal::RemoveLocked(const std::string& name) {
  const std::string path = EntryPath(name);
  if (unlink(path.c_str()) != 0 && errno != ENOENT) {
    return absl::ErrnoToStatus(errno, absl::StrCat("remove ", path));
  }
  return FsyncDir(dir_);
}

absl::Status SettingsJournal::Restore(const std::string& name) {
  absl::MutexLock lock(&mutex_);
  return RestoreLocked(name).status();
}

absl::StatusOr<std::vector<std::string>> SettingsJournal::List() {
  absl::StatusOr<std::vector<std::string>> files = ListDirectory(dir_);
  if (!files.ok()) return files.status();
  std::vector<std::string> names;
  for (const std::string& file : *files) {
    if (file[0] != '.' && absl::EndsWith(file, kSuffix)) {
      names.push_back(file.substr(0, file.size() - kSuffix.size()));
    }
  }
  return names;
}

absl::StatusOr<RecoveryReport> SettingsJournal::RecoverAll() {
  absl::MutexLock lock(&mutex_);
  absl::StatusOr<std::vector<std::string>> names = List();
  if (!names.ok()) return names.status();
  RecoveryReport report;
  for (const std::string& name : *names) {
    absl::StatusOr<RestoreResult> result = RestoreLocked(name);
    if (!result.ok()) {
      report.failed.push_back(absl::StrCat(name, ": ", result.status().message()));
    } else if (result->outcome == RestoreResult::kStale) {
      report.stale.push_back(absl::StrCat(name, ": ", result->stale_reason));
    } else if (result->outcome == RestoreResult::kRestored) {
      report.restored.push_back(name);
    }
  }
  return report;
}

}  // namespace blkbench
