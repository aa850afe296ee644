// 64-bit mixing functions shared by the trace hash and the RNG seeding (no std::hash:
// its values are not specified, and determinism must hold across builds).
#ifndef BLKBENCH_ENGINE_SIM_HASH_H_
#define BLKBENCH_ENGINE_SIM_HASH_H_

#include <cstdint>

#include "common/rng.h"

namespace blkbench::engine {

// The splitmix64 / murmur3 fmix64-style finaliser: a bijection on 64 bits with full
// avalanche. Constants from Steele, Lea & Flood, "Fast splittable PRNGs" (2014).
using ::blkbench::Mix64;  // splitmix64's mixer (common/rng.h)

// An order-sensitive running hash: Add(a); Add(b) differs from Add(b); Add(a).
class TraceHash {
 public:
  static constexpr uint64_t kInitial = 0xcbf29ce484222325ULL;  // the FNV-1a offset basis

  void Add(uint64_t v) { h_ = Mix64(h_ ^ v) + 0x9e3779b97f4a7c15ULL; }
  uint64_t value() const { return h_; }
  void Reset() { h_ = kInitial; }

 private:
  uint64_t h_ = kInitial;
};

}  // namespace blkbench::engine

#endif  // BLKBENCH_ENGINE_SIM_HASH_H_
