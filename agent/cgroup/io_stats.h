// What each of a run's cgroups did on the run's device, from the kernel's own per-cgroup
// counters: cgroup v2 io.stat ("MAJ:MIN rbytes=.. wbytes=.. rios=.. wios=.. ..."); cgroup v1
// bfq's blkio.bfq.io_service_bytes / io_serviced ("MAJ:MIN Read N", "Write N", ...) when
// they saw the device (bfq scheduled the run), else blk-throttle's blkio.throttle.* (which
// recent kernels keep at 0 for a group without a limit). The groups are made per run, so
// the counters are the run's, ramp included.
#ifndef BLKBENCH_AGENT_CGROUP_IO_STATS_H_
#define BLKBENCH_AGENT_CGROUP_IO_STATS_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "agent/cgroup/hierarchy.h"

namespace blkbench {

struct GroupIoStats {
  uint64_t read_ios = 0, write_ios = 0;
  uint64_t read_bytes = 0, write_bytes = 0;
  uint64_t ios() const { return read_ios + write_ios; }
  uint64_t bytes() const { return read_bytes + write_bytes; }
};

// Parses one stats file's text for device `dev` ("7:3"). v2: io.stat. v1: the bytes file
// and the serviced file of the same family. A device absent from the text did no I/O.
GroupIoStats ParseIoStatV2(absl::string_view io_stat, absl::string_view dev);
GroupIoStats ParseBlkioV1(absl::string_view service_bytes, absl::string_view serviced,
                          absl::string_view dev);

// Reads group directory `dir`'s counters for `dev`. NotFound when the group has none of
// the files (no io / blkio controller there).
absl::StatusOr<GroupIoStats> ReadGroupIoStats(CgroupVersion version, const std::string& dir,
                                              absl::string_view dev);

}  // namespace blkbench

#endif  // BLKBENCH_AGENT_CGROUP_IO_STATS_H_
