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
#include "engine/sched/elevator_type.h"

namespace blkbench::engine {

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
