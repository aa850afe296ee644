// Per-job I/O generator: data direction (fio get_rw_ddir / get_rand_ddir) and offset
// (fio get_next_offset with norandommap) inside the job's region. Header-only hot path.
#ifndef BLKBENCH_AGENT_EXECUTOR_OFFSETS_H_
#define BLKBENCH_AGENT_EXECUTOR_OFFSETS_H_

#include <cstdint>

namespace blkbench {

// xoshiro256** (Blackman & Vigna), seeded through splitmix64: fast, 256 bits of state,
// good enough for offsets; deterministic for a given seed.
class Xoshiro256 {
 public:
  explicit Xoshiro256(uint64_t seed);
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
  // Uniform in [0, n) by Lemire's multiply-shift (no division; bias < n / 2^64).
  uint64_t Below(uint64_t n) {
    return static_cast<uint64_t>((static_cast<unsigned __int128>(Next()) * n) >> 64);
  }

 private:
  static uint64_t Rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t s_[4];
};

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
      write = ddir_rng_.Below(100) + 1 > read_percent_;
    }
    if (random_) return {start_ + offset_rng_.Below(blocks_) * bs_, write};
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
  Xoshiro256 offset_rng_;
  Xoshiro256 ddir_rng_;
};

}  // namespace blkbench

#endif  // BLKBENCH_AGENT_EXECUTOR_OFFSETS_H_
