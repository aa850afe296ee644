// The engine's random numbers are the project's one generator (common/rng.h): xoshiro256**
// seeded by splitmix64, with per-component streams from Rng::Fork.
#ifndef BLKBENCH_ENGINE_SIM_RNG_H_
#define BLKBENCH_ENGINE_SIM_RNG_H_

#include "common/rng.h"

namespace blkbench::engine {

using ::blkbench::Rng;

}  // namespace blkbench::engine

#endif  // BLKBENCH_ENGINE_SIM_RNG_H_
