// Seeding for the per-job I/O generator (see offsets.h).
#include "agent/executor/offsets.h"

namespace blkbench {
namespace {

// splitmix64: spreads a small seed (fio's default randseed is 0x89, jobs add their
// index) over 256 bits of xoshiro state; never yields the all-zero state.
uint64_t SplitMix64(uint64_t& x) {
  uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

}  // namespace

Xoshiro256::Xoshiro256(uint64_t seed) {
  for (uint64_t& s : s_) s = SplitMix64(seed);
}

// The direction stream is seeded apart from the offset stream (fio keeps a separate
// rwmix_state), so rwmixread does not change the offset sequence.
IoGenerator::IoGenerator(const IoGeneratorConfig& c)
    : start_(c.region_start),
      bs_(c.block_size),
      blocks_(c.region_len / c.block_size),
      random_(c.random),
      read_percent_(c.read_percent),
      offset_rng_(c.seed),
      ddir_rng_(c.seed ^ 0x5eed0fd1a7a5eedULL) {}

}  // namespace blkbench
