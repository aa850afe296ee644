// SplitMix64: the device models' small deterministic RNG (explicitly seeded, no global state).
#ifndef BLKBENCH_ENGINE_DEVICE_SPLITMIX_H_
#define BLKBENCH_ENGINE_DEVICE_SPLITMIX_H_

#include <cstdint>

#include "common/rng.h"

namespace blkbench::engine {

// Steele, Lea & Flood's SplitMix64 (the generator Java's SplittableRandom uses): one add and
// three xor-shift-multiply rounds per value, full 2^64 period, good enough for placement.
class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}

  uint64_t Next() { return SplitMix64Next(state_); }

  // Uniform in [0, n); the multiply-shift mapping avoids the modulo bias of Next() % n.
  uint64_t Below(uint64_t n) {
    return static_cast<uint64_t>((static_cast<unsigned __int128>(Next()) * n) >> 64);
  }

 private:
  uint64_t state_;
};

}  // namespace blkbench::engine

#endif  // BLKBENCH_ENGINE_DEVICE_SPLITMIX_H_
