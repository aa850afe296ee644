// Facts about a benchmark target (block device or regular file): size, block sizes, model,
// schedulers and the queue settings in force. Reported at registration and with each result.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "agent/device/sysfs.h"
#include "blkbench/v1/metrics.pb.h"

namespace blkbench {

// Facts of the target at `path`, which may be a symlink (e.g. /dev/disk/by-id/...): it is
// resolved with realpath and the result's `path` keeps the caller's (stable) spelling, while
// `kernel_name` names what it resolved to ("loop0", "nvme0n1p2").
// Block device: identity from its major:minor in <sysfs>/dev/block, queue attributes from the
// disk that owns the queue (the parent disk for a partition), is_block = true.
// Regular file: size, the direct-I/O alignment the filesystem needs as logical block size
// (statx STATX_DIOALIGN, else 512), st_blksize as physical block size, no queue settings.
// Errors: NotFound if the path does not resolve, InvalidArgument for any other file type.
// `device_class` "" means the class DetectDeviceClass finds (detected_class is always set).
absl::StatusOr<v1::DeviceFacts> ReadDeviceFacts(const std::string& path,
                                                const std::string& device_class,
                                                const SystemPaths& paths = SystemPaths());

// The block-device part of ReadDeviceFacts for the device whose canonical sysfs directory is
// `device_dir` (see BlockSysfsDir): kernel_name, is_block, size, block sizes, rotational,
// model, schedulers, queue settings and queue_depth; path and device_class are left empty.
// Optional attributes (model, queue_depth, a scheduler file) may be absent; size and logical
// block size may not.
// Also the capabilities (zoned, write_cache, io_poll, nr_hw_queues) and detected_class.
absl::StatusOr<v1::DeviceFacts> ReadBlockDeviceFacts(const std::string& device_dir);

// What a device is, from its facts: "null_blk" (nullbN), "loop", "optane" (an NVMe drive
// whose model names Intel Optane / 3D XPoint: P4800X, P4801X, P5800X, P1600X, 900P, 905P),
// "nvme", then "hdd" (rotational) or "ssd"; "file" for a regular file. A config's class
// overrides it (a SATA SSD behind a RAID controller may claim to rotate).
std::string DetectDeviceClass(const v1::DeviceFacts& facts);

}  // namespace blkbench
