// Host facts from procfs and sysfs; see host_facts.h.
#include "agent/device/host_facts.h"

#include <unistd.h>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace blkbench {
namespace {

std::string ReadOrEmpty(const std::string& path) {
  absl::StatusOr<std::string> value = ReadAttribute(path);
  return value.ok() ? *value : std::string();
}

// The value of the first "key : value" line of /proc/cpuinfo whose key is one of `keys`, tried
// in order: x86 has "model name", arm64 only "CPU part"-style keys, powerpc "cpu".
std::string CpuModel(const std::string& cpuinfo) {
  for (absl::string_view wanted : {"model name", "Hardware", "cpu model", "cpu", "uarch"}) {
    for (absl::string_view line : absl::StrSplit(cpuinfo, '\n')) {
      std::pair<absl::string_view, absl::string_view> kv =
          absl::StrSplit(line, absl::MaxSplits(':', 1));
      if (absl::StripAsciiWhitespace(kv.first) == wanted) {
        return std::string(absl::StripAsciiWhitespace(kv.second));
      }
    }
  }
  return "";
}

// MemTotal from /proc/meminfo ("MemTotal:       16384000 kB"), in bytes.
uint64_t MemTotalBytes(const std::string& meminfo) {
  for (absl::string_view line : absl::StrSplit(meminfo, '\n')) {
    if (!absl::ConsumePrefix(&line, "MemTotal:")) continue;
    line = absl::StripAsciiWhitespace(line);
    uint64_t kib = 0;
    if (absl::ConsumeSuffix(&line, "kB") &&
        absl::SimpleAtoi(absl::StripAsciiWhitespace(line), &kib)) {
      return kib * 1024;
    }
  }
  return 0;
}

}  // namespace

uint32_t CountCpuList(absl::string_view list) {
  uint32_t count = 0;
  for (absl::string_view range : absl::StrSplit(absl::StripAsciiWhitespace(list), ',')) {
    std::pair<absl::string_view, absl::string_view> bounds =
        absl::StrSplit(range, absl::MaxSplits('-', 1));
    uint32_t first = 0;
    uint32_t last = 0;
    if (!absl::SimpleAtoi(bounds.first, &first)) return 0;
    if (bounds.second.empty()) {
      last = first;
    } else if (!absl::SimpleAtoi(bounds.second, &last) || last < first) {
      return 0;
    }
    count += last - first + 1;
  }
  return count;
}

v1::HostFacts ReadHostFacts(const SystemPaths& paths) {
  v1::HostFacts facts;
  // /proc/sys/kernel/* carries exactly what uname(2) returns for this UTS namespace.
  facts.set_hostname(ReadOrEmpty(paths.procfs + "/sys/kernel/hostname"));
  facts.set_kernel_release(ReadOrEmpty(paths.procfs + "/sys/kernel/osrelease"));
  facts.set_kernel_version(ReadOrEmpty(paths.procfs + "/sys/kernel/version"));
  facts.set_cmdline(ReadOrEmpty(paths.procfs + "/cmdline"));
  absl::StatusOr<std::string> cpuinfo = ReadWholeFile(paths.procfs + "/cpuinfo");
  if (cpuinfo.ok()) facts.set_cpu_model(CpuModel(*cpuinfo));
  facts.set_cpus(CountCpuList(ReadOrEmpty(paths.sysfs + "/devices/system/cpu/online")));
  absl::StatusOr<std::string> meminfo = ReadWholeFile(paths.procfs + "/meminfo");
  if (meminfo.ok()) facts.set_mem_bytes(MemTotalBytes(*meminfo));
  return facts;
}

}  // namespace blkbench
