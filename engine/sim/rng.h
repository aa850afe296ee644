// Deterministic random numbers: xoshiro256** seeded by splitmix64, with per-component
// streams derived from (seed, stream id) so adding a component never shifts another's.
#ifndef BLKBENCH_ENGINE_SIM_RNG_H_
#define BLKBENCH_ENGINE_SIM_RNG_H_

#include <cassert>
#include <cmath>
#include <cstdint>

#include "engine/sim/hash.h"

namespace blkbench::engine {

// xoshiro256** 1.0 (Blackman & Vigna, 2018, public domain reference at prng.di.unimi.it),
// re-implemented here. Period 2^256 - 1; passes BigCrush. Never seeded from
// std::random_device: the seed is part of the experiment's configuration.
//
// Not thread-safe; give each component its own stream with Fork().
class Rng {
 public:
  explicit Rng(uint64_t seed) : seed_(seed) {
    uint64_t x = seed;
    for (uint64_t& word : s_) {
      x += 0x9e3779b97f4a7c15ULL;  // splitmix64 step, so a zero seed is fine
      word = Mix64(x);
    }
  }

  // An independent stream for component `stream_id`. Depends only on this generator's
  // seed and `stream_id`, not on how many numbers have been drawn, so the fork order and
  // draw interleaving of components do not matter.
  Rng Fork(uint64_t stream_id) const {
    return Rng(Mix64(seed_ ^ Mix64(stream_id + 0x632be59bd9b4e019ULL)));
  }

  uint64_t seed() const { return seed_; }

  uint64_t Next() {
    const uint64_t result = Rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = Rotl(s_[3], 45);
    return result;
  }

  // Uniform integer in [0, n). Lemire's multiply-shift with rejection: unbiased, one
  // 128-bit multiply and almost never a division. REQUIRES: n > 0.
  uint64_t Uniform(uint64_t n) {
    assert(n > 0);
    unsigned __int128 m = static_cast<unsigned __int128>(Next()) * n;
    uint64_t low = static_cast<uint64_t>(m);
    if (low < n) {
      const uint64_t threshold = (0 - n) % n;
      while (low < threshold) {
        m = static_cast<unsigned __int128>(Next()) * n;
        low = static_cast<uint64_t>(m);
      }
    }
    return static_cast<uint64_t>(m >> 64);
  }

  // Uniform integer in [lo, hi]. REQUIRES: lo <= hi.
  uint64_t UniformRange(uint64_t lo, uint64_t hi) {
    assert(lo <= hi);
    if (hi - lo == ~uint64_t{0}) return Next();
    return lo + Uniform(hi - lo + 1);
  }

  // Uniform double in [0, 1) with 53 random bits.
  double NextDouble() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }

  bool Bernoulli(double p) { return NextDouble() < p; }

  // Exponentially distributed with the given mean (inverse CDF; 1 - u is in (0, 1]).
  double Exponential(double mean) { return -mean * std::log(1.0 - NextDouble()); }

 private:
  static uint64_t Rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

  uint64_t seed_;
  uint64_t s_[4];
};

}  // namespace blkbench::engine

#endif  // BLKBENCH_ENGINE_SIM_RNG_H_
