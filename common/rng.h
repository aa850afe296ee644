// Deterministic random numbers for every component (executor offsets, engine, gate):
// xoshiro256** seeded through splitmix64, with per-component streams. One definition so
// the same seed means the same stream everywhere.
#ifndef BLKBENCH_COMMON_RNG_H_
#define BLKBENCH_COMMON_RNG_H_

#include <cassert>
#include <cmath>
#include <cstdint>
#include <numbers>
#include <utility>
#include <vector>

namespace blkbench {

// splitmix64's output function (Steele, Lea & Flood 2014): a strong 64-bit mixer.
inline constexpr uint64_t Mix64(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x;
}

// One splitmix64 step: advances `state` and returns the next value (full 2^64 period).
inline uint64_t SplitMix64Next(uint64_t& state) { return Mix64(state += 0x9e3779b97f4a7c15ULL); }

// Mixes a task id into a seed so independent tasks get independent streams.
inline uint64_t DeriveSeed(uint64_t seed, uint64_t task) {
  uint64_t s = seed ^ (task * 0xd1342543de82ef95ULL);
  return SplitMix64Next(s);
}

// Why not <random>: its distributions are implementation-defined, so one seed would give
// different streams on libstdc++ and libc++; results here must follow from the seed alone.
// xoshiro256** 1.0 (Blackman & Vigna 2018), re-implemented: period 2^256 - 1, passes
// BigCrush; state filled from splitmix64 so any seed (even 0) is fine.
// Not thread-safe: one Rng per job, component or task (see Fork and DeriveSeed).
class Rng {
 public:
  explicit Rng(uint64_t seed) : seed_(seed) {
    uint64_t x = seed;
    for (uint64_t& word : s_) word = SplitMix64Next(x);
  }

  // An independent stream for `stream_id`, depending only on this generator's seed (not
  // on how much has been drawn), so the order components fork in does not matter.
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
  // Standard normal by Box-Muller. For simulations and tests: libm's log/cos may differ
  // in the last bit across platforms.
  double Gaussian() {
    const double u1 = 1.0 - NextDouble();  // (0, 1], so log() is finite
    const double u2 = NextDouble();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
  }
  // Fisher-Yates shuffle in place.
  template <typename T>
  void Shuffle(std::vector<T>& v) {
    for (size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[Uniform(i)]);
  }

 private:
  static uint64_t Rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t seed_;
  uint64_t s_[4];
};

}  // namespace blkbench

#endif  // BLKBENCH_COMMON_RNG_H_
