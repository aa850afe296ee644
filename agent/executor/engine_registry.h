// The I/O engines the executor can run: name → factory + capabilities, like the kernel's
// elevator_type list. The job loop sees only the IoEngine interface (io_engine.h).
#ifndef BLKBENCH_AGENT_EXECUTOR_ENGINE_REGISTRY_H_
#define BLKBENCH_AGENT_EXECUTOR_ENGINE_REGISTRY_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "agent/executor/io_engine.h"

namespace blkbench {

struct EngineType {
  std::string name;  // fio's ioengine= name; RunResult.runner
  uint32_t caps;     // IoEngineCap bits (common/resolved_job.h)
  // Makes one engine for one job; runs in the executor before the job starts.
  std::unique_ptr<IoEngine> (*make)();
};

// Immutable after set-up; Find is thread-safe.
class EngineRegistry {
 public:
  // The built-in engines (engine_registry.cc, one line each), capabilities as in
  // common/resolved_job.h's vocabulary.
  static const EngineRegistry& Builtin();

  EngineRegistry() = default;
  // AlreadyExists for a name that is taken.
  absl::Status Register(EngineType type);
  // nullptr when no engine has that name.
  const EngineType* Find(std::string_view name) const;
  // Every registered name, in registration order.
  std::vector<std::string> Names() const;

 private:
  std::vector<EngineType> types_;
};

// The built-in engines' factories (each defined in its engine's file).
std::unique_ptr<IoEngine> NewUringEngine();
std::unique_ptr<IoEngine> NewLibaioEngine();
std::unique_ptr<IoEngine> NewPsyncEngine();
std::unique_ptr<IoEngine> NewSyncEngine();
std::unique_ptr<IoEngine> NewPvsync2Engine();
std::unique_ptr<IoEngine> NewNopEngine();

}  // namespace blkbench

#endif  // BLKBENCH_AGENT_EXECUTOR_ENGINE_REGISTRY_H_
