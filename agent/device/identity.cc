// Device identity from stat(2), sysfs, /dev/disk/by-id and LOOP_GET_STATUS64, its
// comparison, and the registry of recorded identities; see identity.h.
#include "agent/device/identity.h"

#include <fcntl.h>
#include <linux/loop.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <memory>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace blkbench {
namespace {

constexpr uint64_t kSectorBytes = 512;  // sysfs `size` is always in 512-byte sectors

// Hardware strings go into refusals and logs: only printable ASCII, the rest as '?'.
std::string Printable(absl::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (c < 0x20 || c > 0x7e) c = '?';
  }
  return out;
}

// The first of `dir`/<names> that can be read, printable; "" if none.
std::string FirstAttribute(const std::string& dir, std::initializer_list<const char*> names) {
  for (const char* name : names) {
    absl::StatusOr<std::string> value = ReadAttribute(absl::StrCat(dir, "/", name));
    if (value.ok() && !value->empty()) return Printable(*value);
  }
  return "";
}

uint64_t UintOrZero(const std::string& path) {
  absl::StatusOr<uint64_t> value = ReadUintAttribute(path);
  return value.ok() ? *value : 0;
}

// "loop7" but not "loop7p1" or "loop-control".
bool IsLoopName(absl::string_view name) {
  if (!absl::ConsumePrefix(&name, "loop") || name.empty()) return false;
  return std::all_of(name.begin(), name.end(), [](char c) { return absl::ascii_isdigit(c); });
}

// The backing file's device, inode, offset and size limit, from the loop driver itself
// (loop_get_status). A detached loop device answers ENXIO: then it has no backing file.
absl::Status ReadLoopStatus(const std::string& device, DeviceIdentity* identity) {
  const int fd = open(device.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return absl::ErrnoToStatus(errno, absl::StrCat("open ", device));
  struct loop_info64 info;
  memset(&info, 0, sizeof(info));
  const int rc = ioctl(fd, LOOP_GET_STATUS64, &info);
  const int error = errno;
  close(fd);
  if (rc != 0 && error == ENXIO) {
    identity->backing_file.clear();
    return absl::OkStatus();
  }
  if (rc != 0) return absl::ErrnoToStatus(error, absl::StrCat("LOOP_GET_STATUS64 on ", device));
  identity->backing_device = info.lo_device;
  identity->backing_inode = info.lo_inode;
  identity->loop_offset = info.lo_offset;
  identity->loop_sizelimit = info.lo_sizelimit;
  if (identity->backing_file.empty()) {
    // sysfs has the whole path; lo_file_name only its first LO_NAME_SIZE - 1 bytes.
    const char* name = reinterpret_cast<const char*>(info.lo_file_name);
    identity->backing_file = Printable(std::string(name, strnlen(name, LO_NAME_SIZE)));
  }
  return absl::OkStatus();
}

// The names in `by_id_dir` that resolve to `resolved`, sorted; none if there is no such
// directory (no udev, a container).
std::vector<std::string> ByIdNames(const std::string& by_id_dir, const std::string& resolved) {
  std::vector<std::string> names;
  absl::StatusOr<std::vector<std::string>> entries = ListDirectory(by_id_dir);
  if (!entries.ok()) return names;
  for (const std::string& entry : *entries) {
    std::unique_ptr<char, decltype(&free)> target(
        realpath(absl::StrCat(by_id_dir, "/", entry).c_str(), nullptr), &free);
    if (target != nullptr && resolved == target.get()) names.push_back(Printable(entry));
  }
  return names;
}

std::string Bytes(uint64_t n) {
  if (n != 0 && n % (uint64_t{1} << 30) == 0) return absl::StrCat(n >> 30, " GiB");
  if (n != 0 && n % (uint64_t{1} << 20) == 0) return absl::StrCat(n >> 20, " MiB");
  return absl::StrCat(n, " bytes");
}

std::string DevNumber(uint64_t dev) { return absl::StrCat(major(dev), ":", minor(dev)); }

// "/dev/shm/a (inode 12)", with the backing filesystem's device when `with_device`.
std::string Backing(const DeviceIdentity& id, bool with_device) {
  if (id.backing_file.empty()) return "nothing (detached)";
  std::string where =
      with_device ? absl::StrCat("device ", DevNumber(id.backing_device), ", ") : std::string();
  return absl::StrCat(id.backing_file, " (", where, "inode ", id.backing_inode, ")");
}

bool SharesAny(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  return std::any_of(a.begin(), a.end(), [&](const std::string& x) {
    return std::find(b.begin(), b.end(), x) != b.end();
  });
}

// The changes of a block device, appended to `changes`.
void BlockChanges(const DeviceIdentity& r, const DeviceIdentity& c,
                  std::vector<std::string>* changes) {
  if (r.kernel_name != c.kernel_name) {
    changes->push_back(
        absl::StrCat("kernel name changed from ", r.kernel_name, " to ", c.kernel_name));
  }
  if (r.major != c.major || r.minor != c.minor) {
    changes->push_back(absl::StrCat("device number changed from ", r.major, ":", r.minor, " to ",
                                    c.major, ":", c.minor));
  }
  if (!r.is_loop && r.diskseq != 0 && c.diskseq != 0 && r.diskseq != c.diskseq) {
    changes->push_back(absl::StrCat("diskseq changed from ", r.diskseq, " to ", c.diskseq,
                                    " (the kernel sees a new disk or medium)"));
  }
  auto text = [&](const char* what, const std::string& before, const std::string& after) {
    if (before != after) {
      changes->push_back(absl::StrCat(what, " changed from \"", before, "\" to \"", after, "\""));
    }
  };
  text("WWID", r.wwid, c.wwid);
  text("serial", r.serial, c.serial);
  text("model", r.model, c.model);
  if (!r.by_id.empty() && !c.by_id.empty() && !SharesAny(r.by_id, c.by_id)) {
    changes->push_back(absl::StrCat("/dev/disk/by-id names changed from ",
                                    absl::StrJoin(r.by_id, ", "), " to ",
                                    absl::StrJoin(c.by_id, ", ")));
  }
  if (r.is_loop || c.is_loop) {
    if (r.backing_file != c.backing_file || r.backing_device != c.backing_device ||
        r.backing_inode != c.backing_inode) {
      const bool with_device = r.backing_device != c.backing_device;
      changes->push_back(absl::StrCat("backing file changed from ", Backing(r, with_device), " to ",
                                      Backing(c, with_device)));
    }
    if (r.loop_offset != c.loop_offset) {
      changes->push_back(absl::StrCat("loop offset changed from ", r.loop_offset, " to ",
                                      c.loop_offset, " bytes"));
    }
    if (r.loop_sizelimit != c.loop_sizelimit) {
      changes->push_back(absl::StrCat("loop size limit changed from ", r.loop_sizelimit, " to ",
                                      c.loop_sizelimit, " bytes"));
    }
  }
  if (r.logical_block_size != c.logical_block_size) {
    changes->push_back(absl::StrCat("logical block size changed from ", r.logical_block_size,
                                    " to ", c.logical_block_size, " bytes"));
  }
}

}  // namespace

absl::StatusOr<DeviceIdentity> ReadBlockIdentity(const std::string& device_dir) {
  DeviceIdentity id;
  id.is_block = true;
  id.kernel_name = Basename(device_dir);
  absl::StatusOr<std::string> dev = ReadAttribute(device_dir + "/dev");
  if (!dev.ok()) return dev.status();
  std::pair<absl::string_view, absl::string_view> parts =
      absl::StrSplit(*dev, absl::MaxSplits(':', 1));
  if (!absl::SimpleAtoi(parts.first, &id.major) || !absl::SimpleAtoi(parts.second, &id.minor)) {
    return absl::InvalidArgumentError(
        absl::StrCat(device_dir, "/dev: bad device number \"", *dev, "\""));
  }
  absl::StatusOr<uint64_t> sectors = ReadUintAttribute(device_dir + "/size");
  if (!sectors.ok()) return sectors.status();
  id.size_bytes = *sectors * kSectorBytes;

  // Queue, sequence number and hardware identity belong to the disk (a partition's parent).
  const std::string disk_dir = QueueOwnerDir(device_dir);
  absl::StatusOr<uint64_t> logical = ReadUintAttribute(disk_dir + "/queue/logical_block_size");
  if (!logical.ok()) return logical.status();
  id.logical_block_size = static_cast<uint32_t>(*logical);
  id.diskseq = UintOrZero(disk_dir + "/diskseq");
  id.wwid = FirstAttribute(disk_dir, {"wwid", "device/wwid"});
  id.serial = FirstAttribute(disk_dir, {"device/serial", "serial"});
  id.model = FirstAttribute(disk_dir, {"device/model"});
  if (IsLoopName(Basename(disk_dir))) {
    id.is_loop = true;
    id.backing_file = FirstAttribute(disk_dir, {"loop/backing_file"});
    id.loop_offset = UintOrZero(disk_dir + "/loop/offset");
    id.loop_sizelimit = UintOrZero(disk_dir + "/loop/sizelimit");
  }
  return id;
}

absl::StatusOr<DeviceIdentity> ReadDeviceIdentity(const std::string& path,
                                                  const IdentitySources& sources) {
  absl::StatusOr<ResolvedTarget> target = ResolveTarget(path);
  if (!target.ok()) return target.status();
  const struct stat& st = target->st;
  const std::string& resolved = target->resolved;
  DeviceIdentity id;
  if (S_ISBLK(st.st_mode)) {
    absl::StatusOr<std::string> dir =
        BlockSysfsDir(sources.system, major(st.st_rdev), minor(st.st_rdev));
    if (!dir.ok()) return dir.status();
    absl::StatusOr<DeviceIdentity> block = ReadBlockIdentity(*dir);
    if (!block.ok()) return block.status();
    id = *std::move(block);
    if (id.is_loop) {
      if (absl::Status status = ReadLoopStatus(resolved, &id); !status.ok()) return status;
    }
    id.by_id = ByIdNames(sources.by_id_dir, resolved);
  } else if (S_ISREG(st.st_mode)) {
    id.size_bytes = static_cast<uint64_t>(st.st_size);
    id.file_device = st.st_dev;
    id.file_inode = st.st_ino;
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat(path, " (", resolved, ") is neither a block device nor a regular file"));
  }
  id.path = path;
  id.resolved = resolved;
  return id;
}

std::string IdentityChange(const DeviceIdentity& recorded, const DeviceIdentity& current) {
  std::vector<std::string> changes;
  if (recorded.resolved != current.resolved) {
    changes.push_back(
        absl::StrCat("now resolves to ", current.resolved, " (was ", recorded.resolved, ")"));
  }
  if (recorded.is_block != current.is_block) {
    changes.push_back(recorded.is_block ? "was a block device, is now a regular file"
                                        : "was a regular file, is now a block device");
  } else if (recorded.is_block) {
    BlockChanges(recorded, current, &changes);
  } else if (recorded.file_device != current.file_device ||
             recorded.file_inode != current.file_inode) {
    changes.push_back(absl::StrCat("is another file: inode ", current.file_inode, " on device ",
                                   DevNumber(current.file_device), ", was inode ",
                                   recorded.file_inode, " on device ",
                                   DevNumber(recorded.file_device)));
  }
  if (recorded.is_block == current.is_block && recorded.size_bytes != current.size_bytes) {
    changes.push_back(absl::StrCat("size changed from ", Bytes(recorded.size_bytes), " to ",
                                   Bytes(current.size_bytes)));
  }
  if (changes.empty()) return "";
  return absl::StrCat(recorded.path, ": ", absl::StrJoin(changes, "; "),
                      "; refusing to run on it until the agent is restarted (the agent records "
                      "what each allowlisted device is when it first registers it)");
}

absl::Status DeviceIdentityRegistry::Register(const std::string& path,
                                              const absl::StatusOr<DeviceIdentity>& current) {
  absl::MutexLock lock(&mu_);
  Entry& entry = entries_[path];
  if (!current.ok()) {
    entry.offered = current.status();
  } else if (!entry.recorded.has_value()) {
    entry.recorded = *current;
    entry.offered = absl::OkStatus();
  } else {
    const std::string change = IdentityChange(*entry.recorded, *current);
    entry.offered = change.empty() ? absl::OkStatus() : absl::FailedPreconditionError(change);
  }
  return entry.offered;
}

absl::Status DeviceIdentityRegistry::Check(const std::string& path,
                                           const DeviceIdentity& current) const {
  absl::MutexLock lock(&mu_);
  auto it = entries_.find(path);
  if (it == entries_.end()) {
    return absl::FailedPreconditionError(
        absl::StrCat(path,
                     " has no recorded identity: the agent has not registered it, so it was never "
                     "offered"));
  }
  const Entry& entry = it->second;
  if (!entry.offered.ok()) {
    return absl::FailedPreconditionError(
        absl::StrCat(path, " was not offered at the agent's latest registration (",
                     entry.offered.message(), ")"));
  }
  const std::string change = IdentityChange(*entry.recorded, current);
  if (!change.empty()) return absl::FailedPreconditionError(change);
  return absl::OkStatus();
}

}  // namespace blkbench
