// Seeding for the per-job I/O generator (see offsets.h).
#include "agent/executor/offsets.h"

namespace blkbench {
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
