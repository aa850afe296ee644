// ElevatorRegistry: the registered I/O schedulers, after the kernel's struct elevator_type
// (block/elevator.h) and elv_register() / elevator_find() (block/elevator.c). The blk-mq
// model picks an elevator here by name and sees only the Elevator interface.
#ifndef BLKBENCH_ENGINE_MODEL_ELEVATOR_REGISTRY_H_
#define BLKBENCH_ENGINE_MODEL_ELEVATOR_REGISTRY_H_

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "engine/sched/elevator.h"
#include "engine/sim/machine_profile.h"

namespace blkbench::engine {

struct EngineConfig;  // engine/model/config.h

// elevator_type.ops + init_sched: builds the elevator for a cell. The elevator reads its
// kernel era and patch flags (config.kernel) and anything else it needs (bfq: the cgroup
// weights) here, so the core never branches on them. Never null for a registered type.
using ElevatorFactory = std::unique_ptr<Elevator> (*)(const EngineConfig& config);

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
  std::string name;        // elevator_name: the queue's scheduler value
  ElevatorFactory create;  // a fresh elevator; the core then calls Init()
  // The elevator's global lock (dd->lock, bfqd->lock), taken around bio_merge, insert,
  // dispatch (and completion when LockOnCompletion()): its costs in the machine profile,
  // and its name in the internals (lock.<name>.*). nullptr: no global lock, the hook
  // bodies are charged as CPU work (kyber's per-ctx and per-hctx locks are local).
  LockCosts MachineProfile::*lock;
  std::string lock_name;
  // The lock of the insertion lists, for an elevator that StagesInserts()
  // (dd-insert-lists: dd->insert_lock). nullptr when the elevator never stages.
  LockCosts MachineProfile::*insert_lock;
  std::string insert_lock_name;
  // CPU time of one dispatch_request body (__dd_dispatch_request ...) in the profile.
  SimTime StageCosts::*dispatch_cost;
  // For `lock`; nullopt: the profile's missed_lines for the lock kind at every site.
  std::optional<LockSiteLines> lines = std::nullopt;
};

// A set of elevator types. Builtin() holds the modelled schedulers; a test can copy it
// and Register() its own. Not thread-safe for Register(); const access is.
class ElevatorRegistry {
 public:
  // mq-deadline, bfq and kyber (the table in elevator_registry.cc).
  static const ElevatorRegistry& Builtin();

  // elv_register(): InvalidArgument without a name or factory, or with an insert lock
  // but no global lock; AlreadyExists if the name is taken.
  absl::Status Register(ElevatorType type);
  // elevator_find(): the type registered as `name`, or nullptr.
  const ElevatorType* Find(std::string_view name) const;
  // In registration order.
  const std::vector<ElevatorType>& types() const { return types_; }

 private:
  std::vector<ElevatorType> types_;
};

}  // namespace blkbench::engine

#endif  // BLKBENCH_ENGINE_MODEL_ELEVATOR_REGISTRY_H_
