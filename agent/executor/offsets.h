// Per-job I/O generator: data direction (fio get_rw_ddir / get_rand_ddir) and offset
// (fio get_next_offset with norandommap) inside the job's region. Header-only hot path.
#ifndef BLKBENCH_AGENT_EXECUTOR_OFFSETS_H_
#define BLKBENCH_AGENT_EXECUTOR_OFFSETS_H_

#include <cstdint>

#include "common/rng.h"

namespace blkbench {

struct IoGeneratorConfig {
  uint64_t region_start = 0;  // bytes; the caller checks alignment
  uint64_t region_len = 0;    // bytes, >= block_size
  uint64_t block_size = 0;
  bool random = false;
  uint32_t read_percent = 100;  // 100 = reads only, 0 = writes only
  uint64_t seed = 0;
};

struct NextIo {
  uint64_t offset;
  bool write;
};

// Random offsets are uniform over the bs-aligned blocks of the region, drawn with
// replacement, like fio norandommap (no coverage bitmap). Sequential offsets advance
// by bs from region start and wrap at region end, separately per direction like fio's
// per-ddir f->last_pos. Mixed modes pick the direction per I/O: read when a uniform
// draw in [1, 100] is <= read_percent (fio get_rand_ddir, without fio's rwmix_issues
// run-length smoothing).
class IoGenerator {
 public:
  explicit IoGenerator(const IoGeneratorConfig& c);

  NextIo Next() {
    bool write;
    if (read_percent_ >= 100) {
      write = false;
    } else if (read_percent_ == 0) {
      write = true;
    } else {
      write = ddir_rng_.Uniform(100) + 1 > read_percent_;
    }
    if (random_) return {start_ + offset_rng_.Uniform(blocks_) * bs_, write};
    uint64_t& pos = seq_pos_[write];
    const uint64_t off = start_ + pos;
    pos += bs_;
    if (pos >= blocks_ * bs_) pos = 0;
    return {off, write};
  }

 private:
  uint64_t start_, bs_, blocks_;
  bool random_;
  uint32_t read_percent_;
  uint64_t seq_pos_[2] = {0, 0};
  Rng offset_rng_;
  Rng ddir_rng_;
};

}  // namespace blkbench

#endif  // BLKBENCH_AGENT_EXECUTOR_OFFSETS_H_
