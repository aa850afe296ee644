// Applies a run's block-queue settings (scheduler, nr_requests, the scheduler's iosched/
// tunables, max_sectors_kb) through sysfs and puts the originals back afterwards, journaled
// durably first so that a crashed agent restores them on its next start (RELIABILITY.md
// promise 9).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "agent/device/settings_journal.h"
#include "agent/device/sysfs.h"
#include "blkbench/v1/metrics.pb.h"

namespace blkbench {

// The files of `queue`/iosched/ (the tunables of the scheduler in force) with their values,
// whitespace-trimmed, in name order; nothing for scheduler none or a bio-based queue. What
// a run's applied settings and a device's facts record (QueueSettings.iosched).
void ReadIoschedValues(const std::string& queue,
                       google::protobuf::Map<std::string, std::string>* out);

// Thread-safe; calls for the same device must not overlap (the agent holds a lease on it).
class QueueSettingsJournal {
 public:
  // Opens the journal in `state_dir` (owned exclusively by this instance; see
  // SettingsJournal::Open) for the sysfs tree at `paths.sysfs`. Does not recover: call
  // RecoverAll before the first Apply. `extra_roots` are further directories its entries
  // may name (a configfs mounted outside sysfs, for the runs' null_blk items); `remove_dir`
  // as SettingsJournal::Open's.
  static absl::StatusOr<std::unique_ptr<QueueSettingsJournal>> Open(
      const std::string& state_dir, const SystemPaths& paths = SystemPaths(),
      std::vector<std::string> extra_roots = {}, RemoveDirFn remove_dir = nullptr);

  // Makes `wanted` the queue settings of `dev` (a field left at ""/0, a tunable not in
  // `wanted.iosched`, is left as it is) and sets `*applied` to the settings in force
  // afterwards, as read back from sysfs (`applied->iosched`: every file of iosched/).
  // Before the first write, the originals of everything that will change are journaled,
  // including side effects: a scheduler switch also resets nr_requests and the iosched/
  // tunables, so those are saved too. Order follows the kernel: the scheduler first
  // (switching elevators resets nr_requests and the tunables), then nr_requests (which
  // resets mq-deadline's async_depth), then the tunables in common/iosched_tunables.h's
  // order, then max_sectors_kb. Each write is read back; a value the kernel refuses, clamps
  // or rounds (a jiffies tunable on a kernel with HZ below 1000) is an error and everything
  // changed so far is rolled back. Not a block device: nothing to do, and `*applied` is
  // cleared.
  // Errors: InvalidArgument for a scheduler the device does not offer (naming it and the
  // available ones), a tunable that is not the scheduler's or that its kernel lacks, for
  // max_sectors_kb above max_hw_sectors_kb, or for a value the kernel refused or clamped;
  // FailedPrecondition if the device still has unrestored settings from an earlier Apply;
  // the sysfs error otherwise. On error nothing is left changed, unless rollback itself
  // failed, which the message says (the entry then stays for RecoverAll).
  absl::Status Apply(const v1::DeviceFacts& dev, const v1::QueueSettings& wanted,
                     v1::QueueSettings* applied);

  // Puts back the settings saved by Apply for the device named `kernel_name` (a partition
  // maps to its disk) and drops the journal entry. OK if there is nothing to restore.
  absl::Status Restore(const std::string& kernel_name);

  // Restores every entry a crashed agent left behind; see SettingsJournal::RecoverAll.
  absl::StatusOr<RecoveryReport> RecoverAll();

  // The journal underneath, shared with the runs' cgroup layouts (agent/cgroup), so that the
  // one RecoverAll at agent start restores both.
  SettingsJournal& settings_journal() { return *journal_; }

  // The journal entry name used for the disk that owns `kernel_name`'s queue.
  absl::StatusOr<std::string> EntryName(const std::string& kernel_name) const;

 private:
  QueueSettingsJournal(SystemPaths paths, std::unique_ptr<SettingsJournal> journal);

  // The sysfs directory of the disk owning `kernel_name`'s queue.
  absl::StatusOr<std::string> DiskDir(const std::string& kernel_name) const;

  const SystemPaths paths_;
  const std::unique_ptr<SettingsJournal> journal_;
};

}  // namespace blkbench
