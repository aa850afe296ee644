// The engine's vocabulary tables (see sim_vocabulary.h) and their small parsers.
#include "common/sim_vocabulary.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace blkbench {
namespace {

// Debian's abseil keeps its own string_view type: convert at the boundary.
absl::string_view A(std::string_view s) { return {s.data(), s.size()}; }

constexpr std::string_view kSchedulerNames[] = {"none", "mq-deadline", "bfq", "kyber"};

constexpr uint64_t kU32 = std::numeric_limits<uint32_t>::max();
constexpr uint64_t kU64 = std::numeric_limits<uint64_t>::max();

// engine/device/null_blk.h NullBlkConfig (the configfs attributes of null_blk.rst).
constexpr DeviceParamDef kNullBlkParams[] = {
    {"submit_queues", ParamType::kUint, 0, kU32, ""},
    {"hw_queue_depth", ParamType::kUint, 0, kU32, ""},
    {"irqmode", ParamType::kUint, 0, kU32, ""},
    {"completion_nsec", ParamType::kUint, 0, kU64, ""},
    {"blocksize", ParamType::kUint, 0, kU32, ""},
    {"memory_backed", ParamType::kBool, 0, 0, ""},
    {"queue_mode", ParamType::kQueueMode, 0, 0, ""},
    {"size", ParamType::kUint, 1, kU32, "MiB; the model presents its fixed size"},
    {"home_node", ParamType::kUint, 0, 1023, "a NUMA node; not modelled"},
};

// engine/device/hdd.h HddConfig and its geometry.
constexpr DeviceParamDef kHddParams[] = {
    {"capacity", ParamType::kBytes, 0, 0, ""},
    {"rpm", ParamType::kUint, 0, kU32, ""},
    {"outer_mbps", ParamType::kDouble, 0, 0, ""},
    {"inner_mbps", ParamType::kDouble, 0, 0, ""},
    {"track_to_track_us", ParamType::kDouble, 0, 0, ""},
    {"mean_seek_us", ParamType::kDouble, 0, 0, ""},
    {"full_stroke_us", ParamType::kDouble, 0, 0, ""},
    {"queue_depth", ParamType::kUint, 0, kU32, ""},
    {"write_cache", ParamType::kBool, 0, 0, ""},
    {"command_overhead_us", ParamType::kMicros, 0, 0, ""},
};

// engine/device/ssd.h SsdConfig (Optane is the same model with other presets).
constexpr DeviceParamDef kSsdParams[] = {
    {"dies", ParamType::kUint, 0, kU32, ""},        {"read_us", ParamType::kMicros, 0, 0, ""},
    {"page_size", ParamType::kBytes, 0, 0, ""},     {"ctrl_us", ParamType::kMicros, 0, 0, ""},
    {"bus_mbps", ParamType::kDouble, 0, 0, ""},     {"fixed_us", ParamType::kMicros, 0, 0, ""},
    {"write_ack_us", ParamType::kMicros, 0, 0, ""}, {"write_buffer", ParamType::kBytes, 0, 0, ""},
    {"program_mbps", ParamType::kDouble, 0, 0, ""}, {"queue_depth", ParamType::kUint, 0, kU32, ""},
    {"hw_queues", ParamType::kUint, 0, kU32, ""},
};

// The simulated host's blk-mq settings (engine/model/config.h QueueOptions).
constexpr DeviceParamDef kEngineParams[] = {
    {"can_queue", ParamType::kUint, 1, 65536, "SCSI host tags (driver tags) of a budgeted device"},
    {"rq_affinity", ParamType::kUint, 0, 2, "0, 1 or 2 as /sys/block/X/queue/rq_affinity"},
    {"irq_cpu", ParamType::kUint, 0, 4095, "the CPU that takes the device's interrupt"},
    {"devices", ParamType::kUint, 1, kMaxSimDevices,
     "identical devices the cell's jobs drive, as fio's filename=a:b (file_service_type)"},
};

constexpr DeviceFamilyDef kFamilies[] = {
    {"null_blk", kNullBlkParams}, {"hdd", kHddParams},       {"ssd", kSsdParams},
    {"optane", kSsdParams},       {"engine", kEngineParams},
};

constexpr SimDeviceDef kSimDevices[] = {
    {"null_blk", "null_blk", false, true, "null_blk with its configfs parameters"},
    {"hdd", "hdd", true, true, "1 TiB 7200 rpm drive, NCQ 32, per-LUN budget (SCSI-like)"},
    {"hdd-seed003", "hdd", true, false, "seed 003's drive: 110 -> 95 MB/s media rate"},
    {"ssd", "ssd", false, true, "NVMe TLC (Gen3 x4), 64 dies"},
    {"ssd-sata", "ssd", false, false, "SATA TLC, 550 MB/s, NCQ 32, per-LUN budget"},
    {"ssd-seed004", "ssd", false, false, "seed 004's fit: 30 us controller + 8 dies"},
    {"optane", "optane", false, true, "Intel Optane P4800X, ~10 us at QD1"},
    {"optane-p5800x", "optane", false, false, "Intel Optane P5800X, ~5 us at QD1"},
};

constexpr std::string_view kDeadline[] = {"mq-deadline"};
constexpr std::string_view kBfq[] = {"bfq"};

// The schedulers each flag changes: where engine/model reads the KernelSpec field.
constexpr PatchFlagDef kPatchFlags[] = {
    {"plug-batch-retry", {}, "003", "6.19 multi-pass batch tag allocation"},
    {"dd-batch-dispatch", kDeadline, "000",
     "dd->lock taken once for up to 8 dispatch_request calls (when not dispatch_busy)"},
    {"bfq-batch-dispatch", kBfq, "000",
     "bfqd->lock taken once for up to 8 dispatch_request calls (when not dispatch_busy)"},
    {"dd-serialize-dispatch", kDeadline, "002",
     "DD_DISPATCHING: a dispatcher that finds one in progress returns nothing without the lock"},
    {"dd-insert-lists", kDeadline, "002",
     "inserts go to lists under their own lock; dispatch sorts them in under dd->lock"},
    {"split-whole-bio", {}, "001", "a bio's front piece waits for the tags of all its pieces"},
    {"wake-by-tags",
     {},
     "001",
     "sbitmap wakes waiters by the tags they need; a queue that cannot cover the batch wakes "
     "one waiter per queue"},
    {"tag-no-preempt",
     {},
     "001",
     "a new bio sleeps without trying while more than 8 wait, unless the last wake-up found "
     "over 2 x wake_batch tags free; split continuations and woken waiters still allocate"},
    {"bfq-one-group-no-idle", kBfq, "004",
     "bfq's 6.2 rule (one busy group is not asymmetric) on any version"},
};

constexpr MachineProfileDef kMachineProfiles[] = {
    {"small-vm", "4 vCPUs, 1 NUMA node, shared L3"},
    {"kvm-2vcpu", "2 vCPUs of a KVM guest (this CI host), measured wake-up latency"},
    {"desktop-16", "16-core 7950X-like desktop, 2 CCDs x 8 cores, SMT2, 1 NUMA node"},
    {"server-128-4node", "128-core Kunpeng-920-like, 4 NUMA nodes (2 sockets x 2 dies), no SMT"},
};

bool ParseDecimal(std::string_view s, int* out) {
  if (s.empty()) return false;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && ptr == s.data() + s.size() && *out >= 0;
}

// Bytes with an optional binary suffix: 4096, 8K, 64MiB, 1T.
bool ParseBytes(std::string_view v, uint64_t* out) {
  std::string s = absl::AsciiStrToUpper(A(v));
  if (absl::EndsWith(s, "IB")) s.resize(s.size() - 2);
  uint64_t mult = 1;
  if (!s.empty()) {
    const size_t shift = absl::string_view("KMGT").find(s.back());
    if (shift != absl::string_view::npos) {
      mult = uint64_t{1} << (10 * (shift + 1));
      s.pop_back();
    }
  }
  uint64_t x;
  if (!absl::SimpleAtoi(s, &x)) return false;
  if (x != 0 && mult > kU64 / x) return false;
  *out = x * mult;
  return true;
}

// The built-in tables and what RegisterScheduler() added after them.
std::vector<std::string_view>& SchedulerTable() {
  static auto* const table =
      new std::vector<std::string_view>(std::begin(kSchedulerNames), std::end(kSchedulerNames));
  return *table;
}

std::vector<PatchFlagDef>& PatchFlagTable() {
  static auto* const table =
      new std::vector<PatchFlagDef>(std::begin(kPatchFlags), std::end(kPatchFlags));
  return *table;
}

}  // namespace

std::span<const std::string_view> Schedulers() { return SchedulerTable(); }

bool IsKnownScheduler(std::string_view name) {
  const std::vector<std::string_view>& names = SchedulerTable();
  return std::find(names.begin(), names.end(), name) != names.end();
}

absl::Status RegisterScheduler(std::string_view name, std::span<const PatchFlagDef> patches) {
  if (name.empty() || name == "none" || IsKnownScheduler(name)) {
    return absl::AlreadyExistsError(absl::StrCat("scheduler \"", A(name), "\" is known"));
  }
  for (const PatchFlagDef& f : patches) {
    if (FindPatchFlag(f.name) != nullptr) {
      return absl::AlreadyExistsError(absl::StrCat("patch flag \"", A(f.name), "\" is known"));
    }
    if (f.schedulers.size() != 1 || f.schedulers[0] != name) {
      return absl::InvalidArgumentError(
          absl::StrCat("patch flag \"", A(f.name), "\" must change \"", A(name), "\" alone"));
    }
  }
  SchedulerTable().push_back(name);
  PatchFlagTable().insert(PatchFlagTable().end(), patches.begin(), patches.end());
  return absl::OkStatus();
}

std::span<const SimDeviceDef> SimDevices() { return kSimDevices; }

const SimDeviceDef* FindSimDevice(std::string_view device_class) {
  if (device_class.substr(0, kSimPrefix.size()) != kSimPrefix) return nullptr;
  const std::string_view name = device_class.substr(kSimPrefix.size());
  for (const SimDeviceDef& d : kSimDevices) {
    if (d.name == name) return &d;
  }
  return nullptr;
}

bool SimDeviceIsScsi(std::string_view kind) {
  return kind.substr(0, 3) == "hdd" || kind == "ssd-sata";
}

std::string SeveralDevicesProblem(std::string_view kind, std::string_view scheduler,
                                  uint64_t devices) {
  if (devices <= 1) return "";
  if (!scheduler.empty() && scheduler != "none") {
    return absl::StrCat("engine.devices ", devices, " needs scheduler none (each device's own ",
                        A(scheduler), " is not modelled), got scheduler '", A(scheduler), "'");
  }
  if (SimDeviceIsScsi(kind)) {
    return absl::StrCat("engine.devices ", devices, " needs a device without a per-LUN budget ",
                        "(sim:ssd, sim:null_blk, sim:optane...), got 'sim:", A(kind), "'");
  }
  return "";
}

std::string SimDeviceList() {
  std::vector<std::string> names;
  for (const SimDeviceDef& d : kSimDevices) names.push_back(absl::StrCat(A(kSimPrefix), A(d.name)));
  return absl::StrJoin(names, ", ");
}

std::vector<std::string> DefaultSimDevices() {
  std::vector<std::string> names;
  for (const SimDeviceDef& d : kSimDevices) {
    if (d.offered_by_default) names.push_back(absl::StrCat(A(kSimPrefix), A(d.name)));
  }
  return names;
}

std::span<const DeviceFamilyDef> DeviceFamilies() { return kFamilies; }

const DeviceFamilyDef* FindDeviceFamily(std::string_view family) {
  for (const DeviceFamilyDef& f : kFamilies) {
    if (f.name == family) return &f;
  }
  return nullptr;
}

const DeviceParamDef* FindDeviceParam(const DeviceFamilyDef& family, std::string_view name) {
  for (const DeviceParamDef& p : family.params) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

std::string DeviceParamList(const DeviceFamilyDef& family) {
  std::vector<absl::string_view> names;
  for (const DeviceParamDef& p : family.params) names.push_back(A(p.name));
  return absl::StrJoin(names, ", ");
}

std::string DeviceParamExpected(const DeviceParamDef& def) {
  std::string want;
  switch (def.type) {
    case ParamType::kUint:
      want = def.min == 0 && (def.max == kU32 || def.max == kU64)
                 ? "an unsigned integer"
                 : absl::StrCat("an integer from ", def.min, " to ", def.max);
      break;
    case ParamType::kMicros:
      want = "microseconds (>= 0, fractions allowed)";
      break;
    case ParamType::kDouble:
      want = "a number";
      break;
    case ParamType::kBool:
      want = "0, 1, true or false";
      break;
    case ParamType::kBytes:
      want = "a size such as 4096, 8K, 64M or 1T";
      break;
    case ParamType::kQueueMode:
      want = "2 (blk-mq)";
      break;
  }
  if (!def.meaning.empty()) absl::StrAppend(&want, " (", A(def.meaning), ")");
  return want;
}

bool ParseDeviceParam(const DeviceParamDef& def, std::string_view value_in, ParsedParam* out) {
  const absl::string_view value = A(value_in);
  switch (def.type) {
    case ParamType::kUint: {
      uint64_t x;
      if (!absl::SimpleAtoi(value, &x) || x < def.min || x > def.max) return false;
      out->integer = x;
      return true;
    }
    case ParamType::kMicros: {
      double x;
      if (!absl::SimpleAtod(value, &x) || !(x >= 0) || x > 1e9) return false;
      out->integer = static_cast<uint64_t>(std::llround(x * 1e3));
      return true;
    }
    case ParamType::kDouble: {
      double x;
      if (!absl::SimpleAtod(value, &x) || !std::isfinite(x)) return false;
      out->number = x;
      return true;
    }
    case ParamType::kBool:
      return absl::SimpleAtob(value, &out->flag);
    case ParamType::kBytes:
      return ParseBytes(value_in, &out->integer);
    case ParamType::kQueueMode:
      out->integer = 2;
      return value == "2";
  }
  return false;
}

std::span<const PatchFlagDef> PatchFlags() { return PatchFlagTable(); }

const PatchFlagDef* FindPatchFlag(std::string_view name) {
  for (const PatchFlagDef& f : PatchFlagTable()) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

bool PatchAppliesTo(const PatchFlagDef& flag, std::string_view scheduler) {
  if (flag.schedulers.empty()) return true;
  if (scheduler.empty()) scheduler = "none";
  return std::find(flag.schedulers.begin(), flag.schedulers.end(), scheduler) !=
         flag.schedulers.end();
}

std::string PatchSchedulerList(const PatchFlagDef& flag) {
  if (flag.schedulers.empty()) return "every scheduler";
  std::vector<absl::string_view> names;
  for (std::string_view s : flag.schedulers) names.push_back(A(s));
  return absl::StrJoin(names, " or ");
}

absl::StatusOr<SimKernel> ParseSimKernel(std::string_view kernel, SimKernelError* error) {
  SimKernel spec;
  SimKernelError local;
  SimKernelError& e = error != nullptr ? *error : local;
  auto fail = [&](std::string message) {
    e.message = std::move(message);
    return absl::InvalidArgumentError(absl::StrCat("kernel \"", A(kernel), "\": ", e.message));
  };
  if (kernel.empty()) return spec;
  if (kernel.substr(0, kSimPrefix.size()) != kSimPrefix) {
    return fail("a simulated device needs \"sim:<major>.<minor>[+patch...]\"");
  }
  std::string_view rest = kernel.substr(kSimPrefix.size());
  const size_t plus = rest.find('+');
  const std::string_view version = rest.substr(0, plus);
  const size_t dot = version.find('.');
  if (dot == std::string_view::npos || !ParseDecimal(version.substr(0, dot), &spec.major) ||
      !ParseDecimal(version.substr(dot + 1), &spec.minor)) {
    return fail(absl::StrCat("version \"", A(version), "\" is not <major>.<minor>"));
  }
  rest = plus == std::string_view::npos ? std::string_view() : rest.substr(plus);
  while (!rest.empty()) {
    rest.remove_prefix(1);  // the '+'
    const size_t next = rest.find('+');
    const std::string_view patch = rest.substr(0, next);
    rest = next == std::string_view::npos ? std::string_view() : rest.substr(next);
    std::vector<absl::string_view> known;
    for (const PatchFlagDef& f : PatchFlagTable()) known.push_back(A(f.name));
    if (patch.empty()) {
      return fail(
          absl::StrCat("empty patch flag after '+'; patch flags: ", absl::StrJoin(known, ", ")));
    }
    if (FindPatchFlag(patch) == nullptr) {
      e.bad_patch = std::string(patch);
      return fail(absl::StrCat("unknown patch flag \"", A(patch),
                               "\"; patch flags: ", absl::StrJoin(known, ", ")));
    }
    if (std::find(spec.patches.begin(), spec.patches.end(), patch) != spec.patches.end()) {
      e.bad_patch = std::string(patch);
      return fail(absl::StrCat("patch flag \"", A(patch), "\" is given twice"));
    }
    spec.patches.emplace_back(patch);
  }
  return spec;
}

std::span<const MachineProfileDef> MachineProfiles() { return kMachineProfiles; }

bool IsKnownMachineProfile(std::string_view name) {
  for (const MachineProfileDef& p : kMachineProfiles) {
    if (p.name == name) return true;
  }
  return false;
}

bool IsMachineProfilePath(std::string_view machine) {
  return machine.find('/') != std::string_view::npos ||
         (machine.size() >= 5 && machine.substr(machine.size() - 5) == ".yaml");
}

}  // namespace blkbench
