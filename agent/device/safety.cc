// The wrong-disk guard; see safety.h. Mirrors what the kernel itself uses to decide a block
// device is busy (bd_claim holders, mounts, swap), plus on-disk signatures like wipefs(8).
#include "agent/device/safety.h"

#include <fcntl.h>
#include <linux/fs.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "agent/device/proc_parse.h"
#include "agent/device/signatures.h"

namespace blkbench {
namespace {

// A device and its partitions, by device number, with the name to use in messages.
struct Member {
  dev_t dev;
  std::string label;  // "/dev/loop3" or "/dev/loop3 (partition loop3p1)"
  std::string sysfs_dir;
};

absl::StatusOr<dev_t> ParseDevNumber(const std::string& path) {
  absl::StatusOr<std::string> text = ReadAttribute(path);
  if (!text.ok()) return text.status();
  std::pair<absl::string_view, absl::string_view> parts =
      absl::StrSplit(*text, absl::MaxSplits(':', 1));
  unsigned maj = 0;
  unsigned min = 0;
  if (!absl::SimpleAtoi(parts.first, &maj) || !absl::SimpleAtoi(parts.second, &min)) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": bad device number \"", *text, "\""));
  }
  return makedev(maj, min);
}

const Member* FindMember(const std::vector<Member>& members, dev_t dev) {
  for (const Member& member : members) {
    if (member.dev == dev) return &member;
  }
  return nullptr;
}

void CheckMounts(const std::vector<Member>& members, const SystemPaths& paths,
                 std::vector<std::string>* reasons) {
  absl::StatusOr<std::string> text = ReadWholeFile(paths.procfs + "/self/mountinfo");
  absl::StatusOr<std::vector<MountEntry>> mounts =
      text.ok() ? ParseMountInfo(*text) : absl::StatusOr<std::vector<MountEntry>>(text.status());
  if (!mounts.ok()) {
    reasons->push_back(absl::StrCat("the mount table cannot be read to check ", members[0].label,
                                    " (", mounts.status().message(), ")"));
    return;
  }
  for (const MountEntry& mount : *mounts) {
    const Member* member = FindMember(members, makedev(mount.major, mount.minor));
    struct stat st;
    if (member == nullptr && !mount.source.empty() && mount.source[0] == '/' &&
        stat(mount.source.c_str(), &st) == 0 && S_ISBLK(st.st_mode)) {
      member = FindMember(members, st.st_rdev);  // btrfs: 0:N in field 3, the device here
    }
    if (member != nullptr) {
      reasons->push_back(absl::StrCat(member->label, " is mounted at ", mount.mount_point, " (",
                                      mount.fs_type, ")"));
    }
  }
}

void CheckSwaps(const std::vector<Member>& members, const SystemPaths& paths,
                std::vector<std::string>* reasons) {
  absl::StatusOr<std::string> text = ReadWholeFile(paths.procfs + "/swaps");
  // No /proc/swaps means a kernel without swap support: nothing can be swap.
  if (!text.ok() && absl::IsNotFound(text.status())) return;
  absl::StatusOr<std::vector<SwapEntry>> swaps =
      text.ok() ? ParseSwaps(*text) : absl::StatusOr<std::vector<SwapEntry>>(text.status());
  if (!swaps.ok()) {
    reasons->push_back(absl::StrCat("the swap table cannot be read to check ", members[0].label,
                                    " (", swaps.status().message(), ")"));
    return;
  }
  for (const SwapEntry& swap : *swaps) {
    struct stat st;
    if (stat(swap.path.c_str(), &st) != 0) continue;
    if (S_ISBLK(st.st_mode)) {
      if (const Member* member = FindMember(members, st.st_rdev)) {
        reasons->push_back(absl::StrCat(member->label, " is active swap"));
      }
    } else if (const Member* member = FindMember(members, st.st_dev)) {
      reasons->push_back(absl::StrCat(member->label, " holds active swap file ", swap.path));
    }
  }
}

void CheckHolders(const std::vector<Member>& members, std::vector<std::string>* reasons) {
  for (const Member& member : members) {
    absl::StatusOr<std::vector<std::string>> holders = ListDirectory(member.sysfs_dir + "/holders");
    if (holders.ok() && !holders->empty()) {
      reasons->push_back(absl::StrCat(member.label, " is held by ", absl::StrJoin(*holders, ", "),
                                      " (device-mapper/LVM, md RAID or bcache)"));
    }
  }
}

// The device itself first, then its partitions: subdirectories with a `partition` attribute.
absl::StatusOr<std::vector<Member>> Members(const std::string& name, dev_t dev,
                                            const SystemPaths& paths) {
  absl::StatusOr<std::string> dir = BlockSysfsDir(paths, major(dev), minor(dev));
  if (!dir.ok()) return dir.status();
  std::vector<Member> members = {{dev, name, *dir}};
  absl::StatusOr<std::vector<std::string>> entries = ListDirectory(*dir);
  if (!entries.ok()) return entries.status();
  for (const std::string& entry : *entries) {
    const std::string sub = absl::StrCat(*dir, "/", entry);
    if (!PathExists(sub + "/partition")) continue;
    absl::StatusOr<dev_t> part_dev = ParseDevNumber(sub + "/dev");
    if (!part_dev.ok()) return part_dev.status();
    members.push_back({*part_dev, absl::StrCat(name, " (partition ", entry, ")"), sub});
  }
  return members;
}

// Every reason the block device `name` (number `dev`) is in use; see CheckNotInUse.
std::vector<std::string> InUseReasons(const std::string& name, dev_t dev,
                                      const SystemPaths& paths) {
  absl::StatusOr<std::vector<Member>> members = Members(name, dev, paths);
  if (!members.ok()) {
    return {absl::StrCat(name, " cannot be checked (", members.status().message(), ")")};
  }
  std::vector<std::string> reasons;
  CheckMounts(*members, paths, &reasons);
  CheckSwaps(*members, paths, &reasons);
  CheckHolders(*members, &reasons);
  if (members->size() > 1) {
    std::vector<std::string> names;
    for (size_t i = 1; i < members->size(); ++i) names.push_back(Basename((*members)[i].sysfs_dir));
    reasons.push_back(absl::StrCat(name, " has partitions (", absl::StrJoin(names, ", "), ")"));
  }
  absl::StatusOr<uint64_t> read_only = ReadUintAttribute((*members)[0].sysfs_dir + "/ro");
  if (read_only.ok() && *read_only != 0) reasons.push_back(absl::StrCat(name, " is read-only"));
  return reasons;
}

absl::Status Refusal(const std::vector<std::string>& reasons) {
  return absl::FailedPreconditionError(
      absl::StrCat(absl::StrJoin(reasons, "; "), "; refusing to write to it"));
}

// Everything CheckSafeToWrite checks for a block device; `fd` is open on it for reading.
absl::Status CheckBlockDevice(const std::string& name, dev_t dev, int fd,
                              const SystemPaths& paths) {
  std::vector<std::string> reasons = InUseReasons(name, dev, paths);
  uint64_t size = 0;
  absl::StatusOr<std::string> signature =
      ioctl(fd, BLKGETSIZE64, &size) == 0
          ? FindSignature(fd, size)
          : absl::StatusOr<std::string>(absl::ErrnoToStatus(errno, "BLKGETSIZE64"));
  if (!signature.ok()) {
    reasons.push_back(absl::StrCat(name, " cannot be checked for signatures (",
                                   signature.status().message(), ")"));
  } else if (!signature->empty()) {
    reasons.push_back(absl::StrCat(name, " carries ", *signature,
                                   " (wipefs(8) clears it, if the data is truly expendable)"));
  }
  if (reasons.empty()) return absl::OkStatus();
  return Refusal(reasons);
}

}  // namespace

absl::StatusOr<std::string> ResolveAllowlisted(const std::vector<AllowlistEntry>& allowlist,
                                               const std::string& requested) {
  absl::StatusOr<std::string> resolved = RealPath(requested);
  if (!resolved.ok()) {
    bool listed = std::any_of(allowlist.begin(), allowlist.end(),
                              [&](const AllowlistEntry& entry) { return entry.path == requested; });
    if (listed) {
      return absl::NotFoundError(absl::StrCat("allowlisted device ", requested,
                                              " is missing: ", resolved.status().message()));
    }
    return absl::PermissionDeniedError(
        absl::StrCat(requested, " is not on this agent's device allowlist (and does not resolve)"));
  }
  for (const AllowlistEntry& entry : allowlist) {
    absl::StatusOr<std::string> allowed = RealPath(entry.path);
    if (allowed.ok() && *allowed == *resolved) return resolved;
  }
  return absl::PermissionDeniedError(absl::StrCat(
      requested, (requested == *resolved ? "" : absl::StrCat(" (resolves to ", *resolved, ")")),
      " is not on this agent's device allowlist"));
}

absl::Status CheckNotInUse(const std::string& name, dev_t dev, const SystemPaths& paths) {
  std::vector<std::string> reasons = InUseReasons(name, dev, paths);
  if (reasons.empty()) return absl::OkStatus();
  return Refusal(reasons);
}

absl::Status CheckSafeToWrite(const std::string& resolved_path, const SystemPaths& paths) {
  struct stat st;
  if (stat(resolved_path.c_str(), &st) != 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        resolved_path, " cannot be checked (", strerror(errno), "); refusing to write to it"));
  }
  if (S_ISREG(st.st_mode)) return absl::OkStatus();
  if (!S_ISBLK(st.st_mode)) {
    return absl::FailedPreconditionError(absl::StrCat(
        resolved_path, " is neither a block device nor a regular file; refusing to write to it"));
  }
  int fd = open(resolved_path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return absl::FailedPreconditionError(
        absl::StrCat(resolved_path, " cannot be opened to check it (", strerror(errno),
                     "); refusing to write to it"));
  }
  absl::Status status = CheckBlockDevice(resolved_path, st.st_rdev, fd, paths);
  close(fd);
  return status;
}

ExclusiveHold::ExclusiveHold(ExclusiveHold&& other) noexcept
    : path_(std::move(other.path_)), fd_(std::exchange(other.fd_, -1)) {}

ExclusiveHold& ExclusiveHold::operator=(ExclusiveHold&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) close(fd_);
    path_ = std::move(other.path_);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

ExclusiveHold::~ExclusiveHold() {
  if (fd_ >= 0) close(fd_);
}

absl::StatusOr<ExclusiveHold> HoldExclusive(const std::string& path) {
  struct stat st;
  if (lstat(path.c_str(), &st) != 0) return absl::ErrnoToStatus(errno, absl::StrCat("stat ", path));
  if (!S_ISBLK(st.st_mode) && !S_ISREG(st.st_mode)) {
    return absl::FailedPreconditionError(
        absl::StrCat(path, " is neither a block device nor a regular file"));
  }
  // O_EXCL without O_CREAT on a block device claims it exclusively (blkdev_open).
  const int flags = O_RDONLY | O_CLOEXEC | O_NOFOLLOW | (S_ISBLK(st.st_mode) ? O_EXCL : 0);
  int fd = open(path.c_str(), flags);
  if (fd < 0) {
    if (errno == EBUSY) {
      return absl::FailedPreconditionError(
          absl::StrCat(path,
                       " is busy: mounted, active swap, or claimed by device-mapper, md or another "
                       "exclusive user; refusing to write to it"));
    }
    return absl::ErrnoToStatus(errno, absl::StrCat("open ", path, " exclusively"));
  }
  ExclusiveHold hold(path, fd);
  struct stat held;
  if (fstat(fd, &held) != 0) return absl::ErrnoToStatus(errno, absl::StrCat("fstat ", path));
  // The path must still name what was checked: same inode, and for a device the same number.
  if (held.st_dev != st.st_dev || held.st_ino != st.st_ino || held.st_rdev != st.st_rdev) {
    return absl::FailedPreconditionError(absl::StrCat(path, " changed while it was opened"));
  }
  if (S_ISREG(st.st_mode) && flock(fd, LOCK_EX | LOCK_NB) != 0) {
    if (errno == EWOULDBLOCK) {
      return absl::FailedPreconditionError(absl::StrCat(path, " is held by another run"));
    }
    return absl::ErrnoToStatus(errno, absl::StrCat("lock ", path));
  }
  return hold;
}

absl::StatusOr<ExclusiveHold> PrepareExclusiveWrite(const std::vector<AllowlistEntry>& allowlist,
                                                    const std::string& requested,
                                                    const SystemPaths& paths) {
  absl::StatusOr<std::string> resolved = ResolveAllowlisted(allowlist, requested);
  if (!resolved.ok()) return resolved.status();
  if (absl::Status status = CheckSafeToWrite(*resolved, paths); !status.ok()) return status;
  absl::StatusOr<ExclusiveHold> hold = HoldExclusive(*resolved);
  if (!hold.ok()) return hold.status();
  struct stat st;
  if (fstat(hold->fd(), &st) != 0) return absl::ErrnoToStatus(errno, "fstat");
  if (S_ISBLK(st.st_mode)) {
    // Nothing can mount or claim the device any more; check again what may have changed
    // between the first check and the hold.
    if (absl::Status status = CheckBlockDevice(*resolved, st.st_rdev, hold->fd(), paths);
        !status.ok()) {
      return status;
    }
  }
  return hold;
}

}  // namespace blkbench
