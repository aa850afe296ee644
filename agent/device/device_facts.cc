// Device facts from stat(2), statx(2) and sysfs; see device_facts.h.
#include "agent/device/device_facts.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "agent/device/queue_settings.h"

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
  ReadIoschedValues(queue, facts.mutable_queue()->mutable_iosched());
  // Capabilities: optional attributes (older kernels, drivers without them).
  if (absl::StatusOr<std::string> zoned = ReadAttribute(queue + "/zoned"); zoned.ok()) {
    facts.set_zoned(*zoned);
  }
  if (absl::StatusOr<std::string> wc = ReadAttribute(queue + "/write_cache"); wc.ok()) {
    facts.set_write_cache(*wc);
  }
  facts.set_io_poll(UintOrZero(queue + "/io_poll") != 0);
  std::error_code ec;
  uint32_t hw_queues = 0;
  for (std::filesystem::directory_iterator it(disk_dir + "/mq", ec), end; !ec && it != end;
       it.increment(ec)) {
    hw_queues += it->is_directory(ec) ? 1 : 0;
  }
  facts.set_nr_hw_queues(hw_queues);
  facts.set_detected_class(DetectDeviceClass(facts));
  return facts;
}

std::string DetectDeviceClass(const v1::DeviceFacts& facts) {
  if (!facts.is_block()) return "file";
  const std::string& name = facts.kernel_name();
  if (absl::StartsWith(name, "nullb")) return "null_blk";
  if (absl::StartsWith(name, "loop")) return "loop";
  if (absl::StartsWith(name, "nvme")) {
    // Intel Optane (3D XPoint) drives by their model strings: the Optane SSD DC P4800X,
    // P4801X, P5800X, the 900P/905P and P1600X ("INTEL SSDPE21D..." is a 900P/905P).
    const std::string model = absl::AsciiStrToLower(facts.model());
    for (const char* mark : {"optane", "p4800x", "p4801x", "p5800x", "p1600x", "900p", "905p",
                             "ssdpe21", "ssdpf21", "ssdpel1"}) {
      if (absl::StrContains(model, mark)) return "optane";
    }
    return "nvme";
  }
  return facts.rotational() ? "hdd" : "ssd";
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
  if (!facts->is_block()) facts->set_detected_class(DetectDeviceClass(*facts));
  // The config's class wins; without one, what sysfs says.
  facts->set_device_class(device_class.empty() ? facts->detected_class() : device_class);
  return facts;
}

}  // namespace blkbench
