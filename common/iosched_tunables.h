// The I/O schedulers' sysfs tunables (/sys/block/X/queue/iosched/<name>) as data: each
// one's scheduler, unit, the range the kernel's store function clamps to, the first kernel
// that has it and what the engine does with it. The matrix parser, the agent and the
// engine's elevators read this one table. Constant data; thread-safe.
#ifndef BLKBENCH_COMMON_IOSCHED_TUNABLES_H_
#define BLKBENCH_COMMON_IOSCHED_TUNABLES_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "blkbench/v1/workload.pb.h"

namespace blkbench {

// What the engine (a sim: cell) does with a tunable.
enum class IoschedEngine : uint8_t {
  kModelled,   // every value the kernel takes changes the model as it changes the kernel
  kOnlyValue,  // only `engine_value` is what the model does (bfq's low_latency 0): others
               // are a validate error on a sim: cell
};

struct IoschedTunableDef {
  std::string_view name;       // the sysfs file and the matrix key ("fifo_batch")
  std::string_view scheduler;  // "mq-deadline", "bfq" or "kyber"
  // The range the kernel's store function clamps to (STORE_INT / STORE_JIFFIES of
  // mq-deadline.c, STORE_FUNCTION of bfq-iosched.c, kstrtoull of kyber-iosched.c). The
  // kernel silently clamps; blkbench refuses a value outside instead.
  int64_t min;
  uint64_t max;
  std::string_view unit;     // "ms", "us", "ns", "KiB", "sectors", "requests", "" (a count or flag)
  std::string_view meaning;  // one line, for `expected` and the docs
  // The first mainline kernel (major * 100 + minor) whose elevator has the file; 0: since
  // the scheduler came to blk-mq (mq-deadline 4.11, bfq and kyber 4.12).
  int since;
  // Another name for the same kernel variable (bfq's slice_idle_us is slice_idle in us):
  // a cell may set only one of the two. "" for none.
  std::string_view same_as;
  IoschedEngine engine;
  int64_t engine_value;  // kOnlyValue: the one value the engine models
};

// The built-in schedulers' tunables (RegisterIoschedTunables adds others after them).
inline constexpr size_t kNumIoschedTunables = 19;

// Every tunable, grouped by scheduler (mq-deadline, bfq, kyber). Within a scheduler the
// order is the order the agent writes them in: bfq's strict_guarantees before slice_idle,
// because turning strict_guarantees on raises slice_idle to at least 8 ms.
std::span<const IoschedTunableDef> IoschedTunables();
// The tunable named `name` of any scheduler, or nullptr.
const IoschedTunableDef* FindIoschedTunable(std::string_view name);
// The tunable `name` of `scheduler`, or nullptr.
const IoschedTunableDef* FindIoschedTunable(std::string_view scheduler, std::string_view name);
// The names of `scheduler`'s tunables, in table order (empty for none or an unknown one).
std::vector<std::string_view> IoschedTunableNames(std::string_view scheduler);
// Adds the tunables of a scheduler registered with RegisterScheduler (sim_vocabulary.h);
// the same rules (start-up only, static text). InvalidArgument for a scheduler the
// vocabulary does not know or a built-in one; AlreadyExists for a name any scheduler has.
absl::Status RegisterIoschedTunables(std::span<const IoschedTunableDef> tunables);
// "read_expire, write_expire, ..." for messages.
std::string IoschedTunableList(std::string_view scheduler);

// What a valid value looks like, completing "expected ..." ("an integer from 0 to
// 2147483647 (ms; mq-deadline: ...)").
std::string IoschedTunableExpected(const IoschedTunableDef& def);

// `text` as the decimal sysfs takes (the form a cell stores and the agent writes), or
// nullopt if it is not an integer in the kernel's range. The flags (front_merges,
// low_latency, strict_guarantees) also take true and false.
std::optional<std::string> CanonicalIoschedValue(const IoschedTunableDef& def,
                                                 std::string_view text);
// The stored (canonical) value as a number; 0 for text that is not one.
int64_t IoschedValueInt(std::string_view value);
uint64_t IoschedValueUint(std::string_view value);

// The problems with the tunables of `queue` (QueueSettings.iosched) under its scheduler
// ("" = left as found) on a kernel of `version` (major * 100 + minor; 0 when unknown, as
// for a real kernel glob), in table order: a tunable of another scheduler or with none
// chosen, two names for one variable, a tunable the kernel does not have yet; with
// `simulated`, also a value the engine does not model (kOnlyValue). Values are assumed
// canonical (CanonicalIoschedValue). Empty when the settings are fine.
struct IoschedProblem {
  std::string name;  // the tunable the problem is about
  // The other key it involves: "scheduler", "kernel", "device_class" ("" for none).
  std::string_view other_key;
  std::string message;
};
std::vector<IoschedProblem> CheckIoschedTunables(const v1::QueueSettings& queue, int version,
                                                 bool simulated);

}  // namespace blkbench

#endif  // BLKBENCH_COMMON_IOSCHED_TUNABLES_H_
