// The gate's resampling and permutation draws use the project's one generator
// (common/rng.h), so a verdict is reproducible from (data, seed) alone.
#ifndef BLKBENCH_CONTROLLER_GATE_RNG_H_
#define BLKBENCH_CONTROLLER_GATE_RNG_H_

#include "common/rng.h"

namespace blkbench::gate {

using ::blkbench::DeriveSeed;
using ::blkbench::Rng;

}  // namespace blkbench::gate

#endif  // BLKBENCH_CONTROLLER_GATE_RNG_H_
