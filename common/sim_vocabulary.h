// The scheduler engine's vocabulary as data: the I/O schedulers, the simulated device
// classes with their parameter tables, the kernel-profile syntax and patch flags, and the
// machine profiles. The matrix parser validates against it without linking the engine;
// the engine, the agent and the docs read the same tables. Constant data; thread-safe.
#ifndef BLKBENCH_COMMON_SIM_VOCABULARY_H_
#define BLKBENCH_COMMON_SIM_VOCABULARY_H_

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace blkbench {

// Device classes and kernels that name the engine start with this.
inline constexpr std::string_view kSimPrefix = "sim:";
// engine.devices: at most this many identical simulated devices in one cell.
inline constexpr uint64_t kMaxSimDevices = 64;

// --- I/O schedulers -------------------------------------------------------------------

// The elevators blkbench knows, in the order the docs list them: "none" and the three
// blk-mq elevators of mainline (block/mq-deadline.c, bfq-iosched.c, kyber-iosched.c).
// The matrix accepts exactly these, the agent offers them on simulated devices and the
// engine models every one (engine/model/vocabulary_test.cc checks that).
std::span<const std::string_view> Schedulers();
bool IsKnownScheduler(std::string_view name);

// --- Simulated devices ----------------------------------------------------------------

// How a device parameter's text is read.
enum class ParamType {
  kUint,       // decimal unsigned integer up to DeviceParamDef::max
  kMicros,     // microseconds >= 0, fractions allowed; parsed to ns
  kDouble,     // any finite number
  kBool,       // 0, 1, true or false
  kBytes,      // 4096, 8K, 64M, 1T, 64MiB (binary)
  kQueueMode,  // null_blk queue_mode: only "2" (blk-mq; the bio mode left in 6.9)
};

struct DeviceParamDef {
  std::string_view name;  // after the family prefix: "queue_depth" for "ssd.queue_depth"
  ParamType type;
  uint64_t min;  // kUint only: the smallest and largest value the model takes
  uint64_t max;
  std::string_view meaning;  // optional, shown in parentheses after what is expected
};

// One family of parameters, written in a matrix as `device: {<family>: {name: value}}` and
// stored in a cell as "<family>.<name>". "engine" holds the simulated host's blk-mq
// settings (can_queue, rq_affinity, irq_cpu) rather than a device model's.
struct DeviceFamilyDef {
  std::string_view name;
  std::span<const DeviceParamDef> params;
};

// A simulated device class, "sim:<name>".
struct SimDeviceDef {
  std::string_view name;    // "ssd-sata" (without "sim:")
  std::string_view family;  // whose parameters it takes: "ssd"
  bool rotational;
  bool offered_by_default;  // an agent offers it unless its config lists sim_devices
  std::string_view description;
};

std::span<const SimDeviceDef> SimDevices();
// The class `device_class` ("sim:hdd") names, or nullptr (also for a non-sim class).
const SimDeviceDef* FindSimDevice(std::string_view device_class);
// "sim:null_blk, sim:hdd, ..." for messages.
std::string SimDeviceList();
// SCSI-like (hdd*, ssd-sata): a per-LUN dispatch budget and one interrupt vector.
bool SimDeviceIsScsi(std::string_view kind);
// Why the engine cannot run `devices` (> 1) devices of `kind` with `scheduler` ("" or
// "none" = none) in one cell, or "" when it can: each device's own elevator and per-LUN
// budget are not modelled, so several devices need scheduler none and a device without a
// budget (NVMe, null_blk, Optane).
std::string SeveralDevicesProblem(std::string_view kind, std::string_view scheduler,
                                  uint64_t devices);
// The classes an agent offers by default: "sim:null_blk", "sim:hdd", "sim:ssd", "sim:optane".
std::vector<std::string> DefaultSimDevices();

// Families that take parameters, in the order the docs list them (null_blk, hdd, ssd,
// optane, engine).
std::span<const DeviceFamilyDef> DeviceFamilies();
const DeviceFamilyDef* FindDeviceFamily(std::string_view family);
const DeviceParamDef* FindDeviceParam(const DeviceFamilyDef& family, std::string_view name);
// "a, b, c": the family's parameter names.
std::string DeviceParamList(const DeviceFamilyDef& family);

// What a valid value of `def` looks like, completing "expected ..." ("an integer from 0
// to 2 (0, 1 or 2 as /sys/block/X/queue/rq_affinity)").
std::string DeviceParamExpected(const DeviceParamDef& def);

// A parameter's value in the model's units: integers, bytes and ns (kMicros) in
// `integer`, kDouble in `number`, kBool in `flag`.
struct ParsedParam {
  uint64_t integer = 0;
  double number = 0;
  bool flag = false;
};
// Parses `value` as `def` describes. False, leaving `out` unspecified, for a bad value.
bool ParseDeviceParam(const DeviceParamDef& def, std::string_view value, ParsedParam* out);

// --- Kernel profiles and patch flags --------------------------------------------------

// The modelled kernel when a sim: cell names none.
inline constexpr std::string_view kDefaultSimKernel = "sim:6.16";

struct PatchFlagDef {
  std::string_view name;  // as written after '+': "dd-batch-dispatch"
  // The schedulers whose behaviour it changes; empty = every scheduler (tags, plugs).
  std::span<const std::string_view> schedulers;
  std::string_view seed;    // docs/seeds.md: "000"
  std::string_view change;  // one line
};

// Every patch flag, in the order the docs list them.
std::span<const PatchFlagDef> PatchFlags();
const PatchFlagDef* FindPatchFlag(std::string_view name);
// True when `flag` changes what `scheduler` does ("" counts as "none").
bool PatchAppliesTo(const PatchFlagDef& flag, std::string_view scheduler);
// A scheduler beyond the built-in ones (a test's, or one kept outside the tree beside its
// engine/sched/ folder) makes itself known here, with the patch flags that change it
// alone, and its tunables with RegisterIoschedTunables (iosched_tunables.h): from then on
// the matrix parser, the engine's config and the agent treat it as a built-in one. Call
// once at start-up, before any other thread reads the vocabulary (the spans above may
// move); `name` and the flags' text must outlive the process (static tables).
// AlreadyExists for a known scheduler or flag name; InvalidArgument for a flag that
// names another scheduler.
absl::Status RegisterScheduler(std::string_view name, std::span<const PatchFlagDef> patches);
// "mq-deadline", "mq-deadline or bfq", "every scheduler".
std::string PatchSchedulerList(const PatchFlagDef& flag);

// "sim:<major>.<minor>[+patch...]" taken apart.
struct SimKernel {
  int major = 6;
  int minor = 16;
  std::vector<std::string> patches;  // in the order given, each a PatchFlags() name
};

// Why a kernel string is not a simulated kernel; `bad_patch` is set for an unknown or
// repeated patch flag so callers can suggest a close name.
struct SimKernelError {
  std::string message;    // "version \"6\" is not <major>.<minor>", "unknown patch flag ..."
  std::string bad_patch;  // the unknown or repeated flag, else empty
};

// Parses "sim:6.16", "sim:5.18+split-whole-bio+wake-by-tags"; "" means kDefaultSimKernel.
// On failure fills `error` (when not null) and returns InvalidArgument "kernel \"...\": "
// + error->message. Rejects a missing "sim:" prefix, a malformed version (two decimal
// numbers), an empty, unknown or repeated patch flag (the message lists the known ones).
absl::StatusOr<SimKernel> ParseSimKernel(std::string_view kernel, SimKernelError* error = nullptr);

// --- Machine profiles -----------------------------------------------------------------

// The machine profile a sim: cell uses when it names none.
inline constexpr std::string_view kDefaultMachine = "desktop-16";

struct MachineProfileDef {
  std::string_view name;  // engine/profiles/<name>.yaml
  std::string_view description;
};

// The profiles shipped in engine/profiles/ (installed to <prefix>/share/blkbench/profiles);
// engine/sim/machine_profile_test.cc checks the list against that directory.
std::span<const MachineProfileDef> MachineProfiles();
bool IsKnownMachineProfile(std::string_view name);
// True when `machine` is a path to a profile file rather than a name (it contains '/' or
// ends in ".yaml"), as LoadMachineProfile reads it.
bool IsMachineProfilePath(std::string_view machine);
// Most bytes a machine profile may have (the shipped ones are under 4 KiB), whether read
// from a profiles directory or carried with a matrix.
inline constexpr size_t kMaxMachineProfileBytes = 64 << 10;

}  // namespace blkbench

#endif  // BLKBENCH_COMMON_SIM_VOCABULARY_H_
