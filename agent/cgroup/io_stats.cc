// Per-cgroup I/O counters; see io_stats.h. Kernel: block/blk-cgroup.c (io.stat),
// block/blk-throttle.c and block/bfq-cgroup.c (the v1 blkio files).
#include "agent/cgroup/io_stats.h"

#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"

namespace blkbench {
namespace {

// The lines of `text` for `dev`, split on white space.
std::vector<std::vector<absl::string_view>> DeviceLines(absl::string_view text,
                                                        absl::string_view dev) {
  std::vector<std::vector<absl::string_view>> out;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    std::vector<absl::string_view> words = absl::StrSplit(line, ' ', absl::SkipWhitespace());
    if (!words.empty() && words[0] == dev) out.push_back(std::move(words));
  }
  return out;
}

uint64_t Number(absl::string_view s) {
  uint64_t v = 0;
  return absl::SimpleAtoi(s, &v) ? v : 0;
}

// v1: "7:3 Read 4096" lines; `read` and `write` get the Read and Write values.
void V1Pairs(absl::string_view text, absl::string_view dev, uint64_t* read, uint64_t* write) {
  for (const auto& words : DeviceLines(text, dev)) {
    if (words.size() < 3) continue;
    if (words[1] == "Read") *read += Number(words[2]);
    if (words[1] == "Write") *write += Number(words[2]);
  }
}

absl::StatusOr<std::string> Slurp(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

GroupIoStats ParseIoStatV2(absl::string_view io_stat, absl::string_view dev) {
  GroupIoStats s;
  for (const auto& words : DeviceLines(io_stat, dev)) {
    for (size_t i = 1; i < words.size(); ++i) {
      const std::pair<absl::string_view, absl::string_view> kv =
          absl::StrSplit(words[i], absl::MaxSplits('=', 1));
      if (kv.first == "rbytes") s.read_bytes += Number(kv.second);
      if (kv.first == "wbytes") s.write_bytes += Number(kv.second);
      if (kv.first == "rios") s.read_ios += Number(kv.second);
      if (kv.first == "wios") s.write_ios += Number(kv.second);
    }
  }
  return s;
}

GroupIoStats ParseBlkioV1(absl::string_view service_bytes, absl::string_view serviced,
                          absl::string_view dev) {
  GroupIoStats s;
  V1Pairs(service_bytes, dev, &s.read_bytes, &s.write_bytes);
  V1Pairs(serviced, dev, &s.read_ios, &s.write_ios);
  return s;
}

absl::StatusOr<GroupIoStats> ReadGroupIoStats(CgroupVersion version, const std::string& dir,
                                              absl::string_view dev) {
  if (version == CgroupVersion::kV2) {
    absl::StatusOr<std::string> text = Slurp(dir + "/io.stat");
    if (!text.ok()) return absl::NotFoundError(dir + ": no io.stat (io controller not enabled)");
    return ParseIoStatV2(*text, dev);
  }
  // The first family whose counters saw the device: bfq's when bfq scheduled the run,
  // blk-throttle's otherwise (recent kernels leave those at 0 for a group with no limit).
  std::optional<GroupIoStats> found;
  for (const char* family : {"bfq", "throttle"}) {
    absl::StatusOr<std::string> bytes = Slurp(dir + "/blkio." + family + ".io_service_bytes");
    absl::StatusOr<std::string> ios = Slurp(dir + "/blkio." + family + ".io_serviced");
    if (!bytes.ok() || !ios.ok()) continue;
    const GroupIoStats stats = ParseBlkioV1(*bytes, *ios, dev);
    if (stats.ios() > 0) return stats;
    if (!found) found = stats;
  }
  if (found) return *found;
  return absl::NotFoundError(dir + ": no blkio.bfq.* or blkio.throttle.* statistics");
}

}  // namespace blkbench
