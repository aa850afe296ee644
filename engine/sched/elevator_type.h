// ElevatorType: what a scheduler folder under engine/sched/ gives the blk-mq model, after
// the kernel's struct elevator_type (block/elevator.h): its name, how it is built for a
// cell, its locks and where they miss. The model registers it with one line
// (engine/model/elevator_registry.cc) and sees only the Elevator interface; the
// scheduler's costs on a machine are the machine profile's schedulers.<name>.
#ifndef BLKBENCH_ENGINE_SCHED_ELEVATOR_TYPE_H_
#define BLKBENCH_ENGINE_SCHED_ELEVATOR_TYPE_H_

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/iosched_tunables.h"
#include "engine/sched/elevator.h"

namespace blkbench::engine {

// What an elevator is built from: the cell's kernel (era and patch flags), the sysfs
// tunables it sets and its cgroups. The scheduler reads what it needs here, so the core
// never branches on a scheduler's flags or tunables.
struct ElevatorSetup {
  int kernel_major = 6;
  int kernel_minor = 16;
  // The cell's patch flags (sim:6.16+<flag>...), every one the vocabulary knows; a
  // scheduler reads its own and ignores the rest.
  std::vector<std::string> patches{};
  // The cell's tunables (QueueSettings.iosched): sysfs file name -> the canonical decimal
  // value, checked against the scheduler's names and the kernel's ranges by validate.
  std::map<std::string, std::string> tunables{};
  // io.bfq.weight of cgroup g at [g - 1] (the cell's cgroup layout; root excluded).
  std::vector<uint32_t> cgroup_weights{};

  bool HasPatch(std::string_view flag) const {
    return std::find(patches.begin(), patches.end(), flag) != patches.end();
  }

  // The sysfs store functions after the switch: each leaves `field` alone unless the cell
  // sets the tunable. A time written in `unit_ns` units (kNsPerMs for the ms attributes).
  template <typename T>
  void SetInt(std::string_view name, T& field) const {
    if (const std::string* v = Find(name)) field = static_cast<T>(IoschedValueInt(*v));
  }
  template <typename T>
  void SetUint(std::string_view name, T& field) const {
    if (const std::string* v = Find(name)) field = static_cast<T>(IoschedValueUint(*v));
  }
  void SetNs(std::string_view name, uint64_t unit_ns, uint64_t& field_ns) const {
    if (const std::string* v = Find(name)) field_ns = IoschedValueUint(*v) * unit_ns;
  }

 private:
  const std::string* Find(std::string_view name) const {
    const auto it = tunables.find(std::string(name));
    return it == tunables.end() ? nullptr : &it->second;
  }
};

// elevator_type.ops + init_sched: a fresh elevator for a cell; the core then calls Init().
// Never null.
using ElevatorFactory = std::unique_ptr<Elevator> (*)(const ElevatorSetup& setup);

// The cache lines a contended take of the elevator lock misses at each call site: lines
// the holder touches under the lock that another CPU last wrote, counted from the
// structures each path of the kernel touches (docs/engine.md "Lock sites"). A property
// of the scheduler's code, the same for every experiment; the machine profile gives
// what one line costs to fetch. The lock word's own line is the hand-off, not counted.
struct LockSiteLines {
  double merge = 0;           // bio_merge
  double insert_first = 0;    // insert_requests: the first request of a hold
  double insert_extra = 0;    // each further request inserted under the same hold
  double dispatch_first = 0;  // dispatch_request: the first request of a hold
  double dispatch_extra = 0;  // each further request of a batch (batch dispatch)
  double dispatch_empty = 0;  // a dispatch_request that finds nothing
  double completion = 0;      // finish_request (LockOnCompletion)
  // The lock is taken once per request inserted (bfq_insert_request), not once per
  // insert_requests call (dd_insert_requests).
  bool insert_per_request = false;
};

// struct elevator_type: what the core needs to know about a scheduler besides its hooks.
struct ElevatorType {
  std::string name{};                // elevator_name: the queue's scheduler value
  ElevatorFactory create = nullptr;  // a fresh elevator for a cell
  // The elevator's global lock (dd->lock, bfqd->lock), taken around bio_merge, insert,
  // dispatch (and completion when LockOnCompletion()), by its name in the internals
  // (lock.<name>.*). Empty: no global lock, the hook bodies are charged as CPU work
  // (kyber's per-ctx and per-hctx locks are local). Its costs, and the dispatch body's
  // CPU time, are the machine profile's schedulers.<name>.
  std::string lock_name{};
  // The lock of the insertion lists, for an elevator that StagesInserts()
  // (dd-insert-lists: dd->insert_lock), costed as the profile's generic lock. Empty when
  // the elevator never stages.
  std::string insert_lock_name{};
  // For the global lock; nullopt: the profile's lock_missed_lines at every site.
  std::optional<LockSiteLines> lines = std::nullopt;
  // The patch flags (ElevatorSetup::patches) and tunables (ElevatorSetup::tunables) the
  // factory reads: the vocabulary's rows for this scheduler must be exactly these
  // (engine/model/vocabulary_test.cc).
  std::vector<std::string_view> patches{};
  std::vector<std::string_view> tunables{};
};

}  // namespace blkbench::engine

#endif  // BLKBENCH_ENGINE_SCHED_ELEVATOR_TYPE_H_
