// Small, fully specified PRNG for the gate's resampling and permutation tests:
// SplitMix64 seeds xoshiro256**; every draw is reproducible from an explicit seed.
#ifndef BLKBENCH_CONTROLLER_GATE_RNG_H_
#define BLKBENCH_CONTROLLER_GATE_RNG_H_

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <numbers>
#include <utility>
#include <vector>

namespace blkbench::gate {

// Why not <random>: std::uniform_int_distribution and std::normal_distribution are
// implementation-defined, so one seed yields different resamples on libstdc++ and libc++.
// A verdict must be reproducible from (data, seed) alone, so the draws are defined here.
// SplitMix64 (Steele, Lea & Flood 2014) spreads any 64-bit seed into well-mixed state;
// xoshiro256** (Blackman & Vigna 2018) has a 2^256-1 period and passes BigCrush.
// Not thread-safe: one Rng per thread or per task, seeded from (seed, task id).
inline uint64_t SplitMix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// Mixes a task id into a seed so independent tasks get independent streams.
inline uint64_t DeriveSeed(uint64_t seed, uint64_t task) {
  uint64_t s = seed ^ (task * 0xd1342543de82ef95ULL);
  return SplitMix64(s);
}

class Rng {
 public:
  explicit Rng(uint64_t seed) {
    uint64_t sm = seed;
    for (uint64_t& word : s_) word = SplitMix64(sm);
  }

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

  // Uniform integer in [0, n) without modulo bias (Lemire 2019). REQUIRES: n > 0.
  uint64_t Below(uint64_t n) {
    unsigned __int128 m = static_cast<unsigned __int128>(Next()) * n;
    auto low = static_cast<uint64_t>(m);
    if (low < n) {
      const uint64_t threshold = (0 - n) % n;
      while (low < threshold) {
        m = static_cast<unsigned __int128>(Next()) * n;
        low = static_cast<uint64_t>(m);
      }
    }
    return static_cast<uint64_t>(m >> 64);
  }

  // Uniform double in [0, 1) with 53 random bits.
  double Uniform() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }

  // Standard normal by Box-Muller. Only for simulations and tests: libm's log/cos may
  // differ in the last bit across platforms, which the gate's own statistics never use.
  double Gaussian() {
    const double u1 = 1.0 - Uniform();  // (0, 1], so log() is finite
    const double u2 = Uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
  }

  // Fisher-Yates shuffle in place.
  template <typename T>
  void Shuffle(std::vector<T>& v) {
    for (size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[Below(i)]);
  }

 private:
  static uint64_t Rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  std::array<uint64_t, 4> s_{};
};

}  // namespace blkbench::gate

#endif  // BLKBENCH_CONTROLLER_GATE_RNG_H_
