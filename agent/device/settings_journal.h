// A durable journal of the original contents of kernel tunables (sysfs, cgroupfs files) and of
// the cgroups the agent is about to change or create, so the host is left as found even if the
// agent crashes (RELIABILITY.md promise 9). Generic: an entry is an ordered list of
// path -> original value, plus cgroup directories to remove.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "agent/device/sysfs.h"

namespace blkbench {

// One file and the value to write to it ("/sys/class/block/sda/queue/scheduler", "bfq").
struct SavedValue {
  std::string path;
  std::string value;
  bool operator==(const SavedValue&) const = default;
};

// A cgroup directory the agent creates, to be removed on restore (agent/cgroup). Leftover tasks
// are moved out first, as `echo PID > <evacuate_to>/<tasks_file>` would.
struct CgroupDir {
  std::string path;         // the cgroup directory
  std::string tasks_file;   // "tasks" (v1: every thread) or "cgroup.procs" (v2)
  std::string evacuate_to;  // a cgroup directory of the same hierarchy that takes leftovers
  // The agent's parent of all runs' groups: shared by concurrent runs, so it is removed only
  // when no other group lives in it (EBUSY is not an error).
  bool shared = false;
  bool operator==(const CgroupDir&) const = default;
};

// A configfs item the agent creates (a null_blk device, /sys/kernel/config/nullb/<name>): on
// restore `power_file` (if not empty) is written "0", then the directory is removed (configfs
// removes its attribute files with it).
struct ConfigfsItem {
  std::string path;
  std::string power_file;
  bool operator==(const ConfigfsItem&) const = default;
};

// rmdir(2) as the journal sees it: 0 or an errno value. On cgroupfs removing a cgroup also
// removes its control files, and fails with EBUSY while it has tasks or child groups; tests on
// a fake tree of plain directories substitute a function that does the same.
using RemoveDirFn = std::function<int(const std::string& path)>;

// What to put back for one changed object (a disk's queue, a cgroup, ...).
struct JournalEntry {
  std::string name;  // unique in the journal; [A-Za-z0-9._:-], not starting with '.'
  // Written back in this order by Restore: order matters for sysfs (e.g. the scheduler before
  // nr_requests, because switching the elevator resets nr_requests).
  std::vector<SavedValue> originals;
  // Removed by Restore in this order (children before parents), before any original is
  // written back. A directory that does not exist is skipped: the agent records the entry
  // before it creates anything.
  std::vector<CgroupDir> cgroups;
  // Removed by Restore first, in this order, each powered off before its rmdir; one that
  // does not exist is skipped (the entry is recorded before the first mkdir).
  std::vector<ConfigfsItem> configfs_items;
  // Identity checks: each path must still read (whitespace-trimmed) as recorded, else the
  // object the entry was made for is gone or replaced and the entry is stale.
  std::vector<SavedValue> guards;
  // The kernel boot the entry was made in (<proc>/sys/kernel/random/boot_id), set by Record.
  // After a reboot the kernel has reset every tunable itself, so the entry is stale.
  std::string boot_id;
};

// What RecoverAll did with each leftover entry.
struct RecoveryReport {
  std::vector<std::string> restored;  // entry names written back and removed
  std::vector<std::string> stale;     // "name: why" for entries removed without writing
  std::vector<std::string> failed;    // "name: error" for entries kept for the next attempt
  bool ok() const { return failed.empty(); }
};

// Thread-safe. One instance owns its state directory (an exclusive flock on <dir>/.lock), so
// two agents can never journal into, or recover from, the same directory.
class SettingsJournal {
 public:
  // Opens (creating with mode 0700 if needed) the journal in `state_dir`. Only paths under one
  // of `allowed_roots` (absolute directories, e.g. "/sys") may be recorded or restored: a
  // tampered journal file must not make a root daemon write arbitrary files.
  // Errors: FailedPrecondition if another process holds the directory, or if it is not owned
  // by this user or is writable by group/others; the errno status if it cannot be created.
  // `remove_dir` removes a journaled cgroup directory (default: rmdir(2)).
  static absl::StatusOr<std::unique_ptr<SettingsJournal>> Open(
      const std::string& state_dir, std::vector<std::string> allowed_roots,
      const SystemPaths& paths = SystemPaths(), RemoveDirFn remove_dir = nullptr);
  ~SettingsJournal();

  // Durably stores `entry` (temp file, fsync, rename, fsync of the directory) before the
  // caller changes anything. AlreadyExists if an entry of that name is present (its object
  // still has unrestored changes), InvalidArgument for a bad name or a path outside the
  // allowed roots.
  absl::Status Record(JournalEntry entry);

  // True if an entry named `name` is present.
  bool Contains(const std::string& name);

  // Reads back entry `name`. NotFound if absent, DataLoss if the file is corrupt.
  absl::StatusOr<JournalEntry> Load(const std::string& name);

  // Removes the cgroups of entry `name` (each one's leftover tasks moved to its evacuate_to
  // first), then writes back its originals in order, then removes the entry durably.
  // OK without writing anything if there is no such entry, or if it is stale (other boot,
  // guard mismatch). If a removal or write fails, the remaining ones are still attempted, the
  // entry is kept for a later attempt, and the error names every failed path.
  absl::Status Restore(const std::string& name);

  // Restores every entry left behind (call at agent start, before accepting work). Stale
  // entries are removed without writing; an unreadable entry is kept and reported as failed.
  // Errors only if the directory itself cannot be listed.
  absl::StatusOr<RecoveryReport> RecoverAll();

  // Names of the entries present, sorted.
  absl::StatusOr<std::vector<std::string>> List();

  const std::string& dir() const { return dir_; }

 private:
  SettingsJournal(std::string dir, int lock_fd, std::vector<std::string> allowed_roots,
                  std::string boot_id, RemoveDirFn remove_dir);

  std::string EntryPath(const std::string& name) const;
  absl::Status CheckPath(const std::string& path) const;
  absl::StatusOr<JournalEntry> LoadLocked(const std::string& name)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  // Why `entry` must not be written back, or "" if it may.
  std::string StaleReason(const JournalEntry& entry) const;
  struct RestoreResult {
    enum Outcome { kAbsent, kRestored, kStale } outcome;
    std::string stale_reason;
  };
  absl::StatusOr<RestoreResult> RestoreLocked(const std::string& name)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  absl::Status RemoveLocked(const std::string& name) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  absl::Status CheckEntryPaths(const JournalEntry& entry) const;

  const std::string dir_;
  const int lock_fd_;  // holds the flock for our lifetime
  const std::vector<std::string> allowed_roots_;
  const std::string boot_id_;
  const RemoveDirFn remove_dir_;
  absl::Mutex mutex_;  // serialises file operations in dir_
};

// Serialises and parses the on-disk form of an entry (a small, line-based text file a lab
// admin can read; paths and values are C-escaped and tab-separated). Exposed for tests.
std::string SerializeJournalEntry(const JournalEntry& entry);
absl::StatusOr<JournalEntry> ParseJournalEntry(absl::string_view text);

// Removes one journaled cgroup (used by Restore; settings_journal_cgroups.cc): OK if it does not
// exist. Otherwise every task listed in <path>/<tasks_file> is moved to evacuate_to (a task
// that exits meanwhile is fine), then `remove_dir` removes it. A shared directory that is still
// busy (other groups in it) is left in place without error; a busy group is retried briefly
// (a task may still be exiting), then the error names what is left in it.
absl::Status RemoveCgroupDir(const CgroupDir& dir, const RemoveDirFn& remove_dir);

// Removes one journaled configfs item (used by Restore): OK if it does not exist; else its
// power file is written "0" (skipped if absent) and the directory removed with `remove_dir`.
absl::Status RemoveConfigfsItem(const ConfigfsItem& item, const RemoveDirFn& remove_dir);

}  // namespace blkbench
