// The built-in engine table (engine_registry.h). Adding an engine: its file, a line here,
// and its row in common/resolved_job.cc's vocabulary (name, proto value, limits).
#include "agent/executor/engine_registry.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/resolved_job.h"

namespace blkbench {
namespace {

struct BuiltinEngine {
  std::string_view name;
  std::unique_ptr<IoEngine> (*make)();
};

constexpr BuiltinEngine kBuiltins[] = {
    {"io_uring", &NewUringEngine}, {"libaio", &NewLibaioEngine},   {"psync", &NewPsyncEngine},
    {"sync", &NewSyncEngine},      {"pvsync2", &NewPvsync2Engine}, {"nop", &NewNopEngine},
};

}  // namespace

const EngineRegistry& EngineRegistry::Builtin() {
  static const EngineRegistry* const r = [] {
    auto* reg = new EngineRegistry;
    // Names are distinct and the vocabulary's (EngineRegistryTest checks both ways).
    for (const BuiltinEngine& b : kBuiltins) {
      const IoEngineInfo* info = FindIoEngine(b.name);
      reg->types_.push_back({std::string(b.name), info != nullptr ? info->caps : 0u, b.make});
    }
    return reg;
  }();
  return *r;
}

absl::Status EngineRegistry::Register(EngineType type) {
  if (Find(type.name) != nullptr) {
    return absl::AlreadyExistsError(absl::StrCat("ioengine ", type.name, " is already registered"));
  }
  types_.push_back(std::move(type));
  return absl::OkStatus();
}

std::vector<std::string> EngineRegistry::Names() const {
  std::vector<std::string> names;
  for (const EngineType& t : types_) names.push_back(t.name);
  return names;
}

const EngineType* EngineRegistry::Find(std::string_view name) const {
  for (const EngineType& t : types_) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

}  // namespace blkbench
