// The schedulers' sysfs tunables (see iosched_tunables.h): names, ranges and units as
// the kernel's elevator_attrs and store functions have them (block/mq-deadline.c,
// block/bfq-iosched.c, block/kyber-iosched.c; checked on a 6.18 loop device).
#include "common/iosched_tunables.h"

#include <algorithm>
#include <charconv>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/sim_vocabulary.h"

namespace blkbench {
namespace {

absl::string_view A(std::string_view s) { return {s.data(), s.size()}; }

constexpr int64_t kIntMin = std::numeric_limits<int32_t>::min();
constexpr uint64_t kIntMax = std::numeric_limits<int32_t>::max();
constexpr uint64_t kUintMax = std::numeric_limits<uint32_t>::max();
constexpr uint64_t kU64Max = std::numeric_limits<uint64_t>::max();
constexpr IoschedEngine kModelled = IoschedEngine::kModelled;
constexpr IoschedEngine kOnly = IoschedEngine::kOnlyValue;

constexpr IoschedTunableDef kTunables[] = {
    // mq-deadline: deadline_attrs[]; STORE_JIFFIES takes ms, STORE_INT a plain int.
    {"read_expire", "mq-deadline", 0, kIntMax, "ms",
     "how long a read may wait before the FIFO serves it first (default 500)", 0, "", kModelled, 0},
    {"write_expire", "mq-deadline", 0, kIntMax, "ms", "the same for writes (default 5000)", 0, "",
     kModelled, 0},
    {"writes_starved", "mq-deadline", kIntMin, kIntMax, "",
     "read batches served while writes wait before a write batch (default 2)", 0, "", kModelled, 0},
    {"front_merges", "mq-deadline", 0, 1, "", "0 or 1: look for front merges (default 1)", 0, "",
     kModelled, 0},
    {"fifo_batch", "mq-deadline", 0, kIntMax, "requests",
     "requests dispatched in one direction and sector order before the FIFOs are looked at "
     "again (default 16)",
     0, "", kModelled, 0},
    {"async_depth", "mq-deadline", 1, kIntMax, "requests",
     "the scheduler tags async I/O and sync writes may hold (5.14+; default nr_requests on "
     "6.10+, 3/4 of it before; reset when nr_requests changes)",
     514, "", kModelled, 0},
    {"prio_aging_expire", "mq-deadline", 0, kIntMax, "ms",
     "how long a lower I/O priority request may wait before it is served (6.0+; default 10000)",
     600, "", kModelled, 0},
    // bfq: bfq_attrs[]; STORE_FUNCTION with kstrtoul, so no negative values.
    {"strict_guarantees", "bfq", 0, 1, "",
     "0 or 1: idle and drain the device to guarantee service (default 0; turning it on raises "
     "slice_idle to at least 8 ms)",
     0, "", kOnly, 0},
    {"low_latency", "bfq", 0, 1, "",
     "0 or 1: weight-raise interactive and soft real-time queues (default 1)", 0, "", kOnly, 0},
    {"slice_idle", "bfq", 0, kIntMax, "ms",
     "how long to idle on an empty sync queue for its next request; 0 never idles (default 8)", 0,
     "", kModelled, 0},
    {"slice_idle_us", "bfq", 0, kUintMax, "us", "slice_idle in microseconds (default 8000)", 0,
     "slice_idle", kModelled, 0},
    {"timeout_sync", "bfq", 1, kIntMax, "ms", "a queue's budget timeout (default 125)", 0, "",
     kModelled, 0},
    {"max_budget", "bfq", 0, kIntMax, "sectors",
     "a queue's largest budget; 0 (default) sets it from the estimated peak rate", 0, "", kModelled,
     0},
    {"fifo_expire_sync", "bfq", 1, kIntMax, "ms",
     "how long a sync request may wait before its queue serves it first (default 125)", 0, "",
     kModelled, 0},
    {"fifo_expire_async", "bfq", 1, kIntMax, "ms", "the same for async requests (default 250)", 0,
     "", kModelled, 0},
    {"back_seek_max", "bfq", 0, kIntMax, "KiB",
     "the farthest backward seek bfq prefers to a forward one (default 16384)", 0, "", kModelled,
     0},
    {"back_seek_penalty", "bfq", 1, kIntMax, "",
     "how many times a backward seek counts against a forward one (default 2)", 0, "", kModelled,
     0},
    // kyber: kyber_sched_attrs[]; kstrtoull, no clamp.
    {"read_lat_nsec", "kyber", 0, kU64Max, "ns", "the read latency target (default 2000000)", 0, "",
     kModelled, 0},
    {"write_lat_nsec", "kyber", 0, kU64Max, "ns", "the write latency target (default 10000000)", 0,
     "", kModelled, 0},
};
static_assert(std::size(kTunables) == kNumIoschedTunables);

std::string VersionText(int version) { return absl::StrCat(version / 100, ".", version % 100); }

// The built-in table and what RegisterIoschedTunables() added after it.
std::vector<IoschedTunableDef>& TunableTable() {
  static auto* const table =
      new std::vector<IoschedTunableDef>(std::begin(kTunables), std::end(kTunables));
  return *table;
}

}  // namespace

std::span<const IoschedTunableDef> IoschedTunables() { return TunableTable(); }

absl::Status RegisterIoschedTunables(std::span<const IoschedTunableDef> tunables) {
  for (const IoschedTunableDef& def : tunables) {
    const bool builtin =
        std::any_of(std::begin(kTunables), std::end(kTunables),
                    [&](const IoschedTunableDef& t) { return t.scheduler == def.scheduler; });
    if (!IsKnownScheduler(def.scheduler) || builtin || def.scheduler == "none") {
      return absl::InvalidArgumentError(absl::StrCat(
          "tunable \"", A(def.name), "\": register scheduler \"", A(def.scheduler), "\" first"));
    }
    if (FindIoschedTunable(def.name) != nullptr) {
      return absl::AlreadyExistsError(absl::StrCat("tunable \"", A(def.name), "\" is known"));
    }
  }
  TunableTable().insert(TunableTable().end(), tunables.begin(), tunables.end());
  return absl::OkStatus();
}

const IoschedTunableDef* FindIoschedTunable(std::string_view name) {
  for (const IoschedTunableDef& def : TunableTable()) {
    if (def.name == name) return &def;
  }
  return nullptr;
}

const IoschedTunableDef* FindIoschedTunable(std::string_view scheduler, std::string_view name) {
  const IoschedTunableDef* def = FindIoschedTunable(name);
  return def != nullptr && def->scheduler == scheduler ? def : nullptr;
}

std::vector<std::string_view> IoschedTunableNames(std::string_view scheduler) {
  std::vector<std::string_view> names;
  for (const IoschedTunableDef& def : TunableTable()) {
    if (def.scheduler == scheduler) names.push_back(def.name);
  }
  return names;
}

std::string IoschedTunableList(std::string_view scheduler) {
  std::vector<absl::string_view> names;
  for (std::string_view n : IoschedTunableNames(scheduler)) names.push_back(A(n));
  return absl::StrJoin(names, ", ");
}

std::string IoschedTunableExpected(const IoschedTunableDef& def) {
  std::string range = def.min == 0 && def.max == 1
                          ? std::string("0 or 1")
                          : absl::StrCat("an integer from ", def.min, " to ", def.max);
  return absl::StrCat(range, " (", def.unit.empty() ? "" : absl::StrCat(A(def.unit), "; "),
                      A(def.scheduler), ": ", A(def.meaning), ")");
}

std::optional<std::string> CanonicalIoschedValue(const IoschedTunableDef& def,
                                                 std::string_view text) {
  const bool flag = def.min == 0 && def.max == 1;
  if (flag && (text == "true" || text == "false")) return text == "true" ? "1" : "0";
  if (text.empty()) return std::nullopt;
  const char* end = text.data() + text.size();
  if (text[0] == '-') {
    int64_t v = 0;
    const auto [p, ec] = std::from_chars(text.data(), end, v);
    if (ec != std::errc() || p != end || v < def.min) return std::nullopt;
    return absl::StrCat(v);
  }
  uint64_t v = 0;
  const auto [p, ec] = std::from_chars(text.data(), end, v);
  if (ec != std::errc() || p != end || v > def.max) return std::nullopt;
  if (def.min > 0 && v < static_cast<uint64_t>(def.min)) return std::nullopt;
  return absl::StrCat(v);
}

int64_t IoschedValueInt(std::string_view value) {
  int64_t v = 0;
  std::from_chars(value.data(), value.data() + value.size(), v);
  return v;
}

uint64_t IoschedValueUint(std::string_view value) {
  uint64_t v = 0;
  std::from_chars(value.data(), value.data() + value.size(), v);
  return v;
}

std::vector<IoschedProblem> CheckIoschedTunables(const v1::QueueSettings& queue, int version,
                                                 bool simulated) {
  std::vector<IoschedProblem> problems;
  const std::string& scheduler = queue.scheduler();
  for (const IoschedTunableDef& def : TunableTable()) {
    const auto it = queue.iosched().find(std::string(def.name));
    if (it == queue.iosched().end()) continue;
    const std::string name(def.name);
    if (scheduler.empty()) {
      problems.push_back(
          {name, "scheduler",
           absl::StrCat("key '", name, "' is a tunable of ", A(def.scheduler),
                        ", and no scheduler is chosen; set scheduler: ", A(def.scheduler),
                        " beside it (iosched/ holds the tunables of the scheduler in force)")});
      continue;
    }
    if (def.scheduler != scheduler) {
      const std::string theirs = IoschedTunableList(scheduler);
      problems.push_back({name, "scheduler",
                          absl::StrCat("key '", name, "' is a tunable of ", A(def.scheduler),
                                       ", not of scheduler ", scheduler, " (",
                                       theirs.empty() ? absl::StrCat(scheduler, " has none")
                                                      : absl::StrCat(scheduler, " has ", theirs),
                                       ")")});
      continue;
    }
    if (!def.same_as.empty() && queue.iosched().count(std::string(def.same_as)) != 0) {
      problems.push_back({name, "",
                          absl::StrCat("keys '", A(def.same_as), "' and '", name,
                                       "' set the same bfq variable; give only one of them")});
      continue;
    }
    if (def.since != 0 && version != 0 && version < def.since) {
      problems.push_back(
          {name, "kernel",
           absl::StrCat("key '", name, "': ", A(def.scheduler), " has no ", name, " before ",
                        VersionText(def.since), " (the kernel is ", VersionText(version), ")")});
      continue;
    }
    if (simulated && def.engine == IoschedEngine::kOnlyValue &&
        IoschedValueInt(it->second) != def.engine_value) {
      problems.push_back({name, "device_class",
                          absl::StrCat("key '", name, "': ", it->second,
                                       " is not modelled by the engine, which runs ",
                                       A(def.scheduler), " as with ", name, " ", def.engine_value,
                                       "; it runs on real devices only")});
    }
  }
  return problems;
}

}  // namespace blkbench
