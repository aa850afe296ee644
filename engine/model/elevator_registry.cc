// The registered elevators (the kernel's elv_list). Adding an elevator = its folder in
// engine/sched/ (its code, its ElevatorType with the factory) and one line in kBuiltin.
#include "engine/model/elevator_registry.h"

#include <algorithm>
#include <cassert>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>

#include "absl/strings/str_cat.h"
#include "engine/sched/bfq/bfq.h"
#include "engine/sched/kyber/kyber.h"
#include "engine/sched/mq_deadline/mq_deadline.h"

namespace blkbench::engine {
namespace {

ElevatorRegistry MakeBuiltin() {
  // One line per scheduler folder of engine/sched/.
  const ElevatorType* const kBuiltin[] = {
      &MqDeadlineType(),
      &BfqType(),
      &KyberType(),
  };
  ElevatorRegistry r;
  for (const ElevatorType* t : kBuiltin) {
    [[maybe_unused]] const absl::Status s = r.Register(*t);
    assert(s.ok());  // the folders give distinct, complete types
  }
  return r;
}

}  // namespace

const ElevatorRegistry& ElevatorRegistry::Builtin() {
  static const ElevatorRegistry* const kRegistry = new ElevatorRegistry(MakeBuiltin());
  return *kRegistry;
}

absl::Status ElevatorRegistry::Register(ElevatorType type) {
  if (type.name.empty() || type.create == nullptr) {
    return absl::InvalidArgumentError("an elevator type needs a name and a factory");
  }
  if (!type.insert_lock_name.empty() && type.lock_name.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("elevator \"", type.name, "\": an insert lock needs a global lock"));
  }
  if (Find(type.name) != nullptr) {
    return absl::AlreadyExistsError(absl::StrCat("elevator \"", type.name, "\" is registered"));
  }
  types_.push_back(std::move(type));
  return absl::OkStatus();
}

const ElevatorType* ElevatorRegistry::Find(std::string_view name) const {
  const auto it = std::find_if(types_.begin(), types_.end(),
                               [name](const ElevatorType& t) { return t.name == name; });
  return it == types_.end() ? nullptr : &*it;
}

}  // namespace blkbench::engine
