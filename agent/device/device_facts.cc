// Device facts from stat(2), statx(2) and sysfs; see device_facts.h.
#include "agent/device/device_facts.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include "absl/strings/str_cat.h"

namespace blkbench {
namespace {

constexpr uint64_t kSectorBytes = 512;  // sysfs `size` is always in 512-byte sectors

uint64_t UintOrZero(const std::string& path) {
  absl::StatusOr<uint64_t> value = ReadUintAttribute(path);
  return value.ok() ? *value : 0;
}

// Regular files: O_DIRECT alignment comes from the filesystem (statx STATX_DIOALIGN, Linux
// 6.1); older kernels do not say, and 512 is what every block device accepts at least.
absl::StatusOr<v1::DeviceFacts> RegularFileFacts(const std::string& resolved,
                                                 const struct stat& st) {
  v1::DeviceFacts facts;
  facts.set_is_block(false);
  facts.set_size_bytes(static_cast<uint64_t>(st.st_size));
  facts.set_logical_block_size(512);
  facts.set_physical_block_size(static_cast<uint32_t>(st.st_blksize));
#ifdef STATX_DIOALIGN
  struct statx stx = {};
  if (statx(AT_FDCWD, resolved.c_str(), 0, STATX_DIOALIGN, &stx) == 0 &&
      (stx.stx_mask & STATX_DIOALIGN) != 0 && stx.stx_dio_offset_align != 0) {
    facts.set_logical_block_size(stx.stx_dio_offset_align);
  }
#else
  (void)resolved;
#endif
  return facts;
}

}  // namespace

absl::StatusOr<v1::DeviceFacts> ReadBlockDeviceFacts(const std::string& device_dir) {
  v1::DeviceFacts facts;
  facts.set_kernel_name(Basename(device_dir));
  facts.set_is_block(true);
  absl::StatusOr<uint64_t> sectors = ReadUintAttribute(device_dir + "/size");
  if (!sectors.ok()) return sectors.status();
  facts.set_size_bytes(*sectors * kSectorBytes);

  const std::string disk_dir = QueueOwnerDir(device_dir);
  const std::string queue = disk_dir + "/queue";
  absl::StatusOr<uint64_t> logical = ReadUintAttribute(queue + "/logical_block_size");
  if (!logical.ok()) return logical.status();
  facts.set_logical_block_size(static_cast<uint32_t>(*logical));
  facts.set_physical_block_size(static_cast<uint32_t>(UintOrZero(queue + "/physical_block_size")));
  facts.set_rotational(UintOrZero(queue + "/rotational") != 0);

  absl::StatusOr<std::string> model = ReadAttribute(disk_dir + "/device/model");
  if (model.ok()) facts.set_model(*model);
  facts.set_queue_depth(static_cast<uint32_t>(UintOrZero(disk_dir + "/device/queue_depth")));

  absl::StatusOr<std::string> scheduler_text = ReadAttribute(queue + "/scheduler");
  if (scheduler_text.ok()) {
    absl::StatusOr<SchedulerList> schedulers = ParseSchedulers(*scheduler_text);
    if (!schedulers.ok()) {
      return absl::Status(schedulers.status().code(),
                          absl::StrCat(queue, "/scheduler: ", schedulers.status().message()));
    }
    for (const std::string& name : schedulers->available) facts.add_schedulers(name);
    facts.mutable_queue()->set_scheduler(schedulers->current);
  }
  facts.mutable_queue()->set_nr_requests(static_cast<uint32_t>(UintOrZero(queue + "/nr_requests")));
  facts.mutable_queue()->set_max_sectors_kb(
      static_cast<uint32_t>(UintOrZero(queue + "/max_sectors_kb")));
  return facts;
}

absl::StatusOr<v1::DeviceFacts> ReadDeviceFacts(const std::string& path,
                                                const std::string& device_class,
                                                const SystemPaths& paths) {
  absl::StatusOr<ResolvedTarget> target = ResolveTarget(path);
  if (!target.ok()) return target.status();
  const struct stat& st = target->st;
  const std::string& resolved = target->resolved;
  absl::StatusOr<v1::DeviceFacts> facts;
  if (S_ISBLK(st.st_mode)) {
    absl::StatusOr<std::string> dir = BlockSysfsDir(paths, major(st.st_rdev), minor(st.st_rdev));
    if (!dir.ok()) return dir.status();
    facts = ReadBlockDeviceFacts(*dir);
  } else if (S_ISREG(st.st_mode)) {
    facts = RegularFileFacts(resolved, st);
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat(path, " (", resolved, ") is neither a block device nor a regular file"));
  }
  if (!facts.ok()) return facts.status();
  facts->set_path(path);
  facts->set_device_class(device_class);
  return facts;
}

}  // namespace blkbench
