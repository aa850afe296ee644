// Per-job I/O generator: data direction (fio get_rw_ddir / get_rand_ddir), block size (fio
// get_next_buflen: bs, bsrange, bssplit) and offset (fio get_next_offset: the random map,
// norandommap, random_distribution) inside the job's region. Header-only hot path.
#ifndef BLKBENCH_AGENT_EXECUTOR_OFFSETS_H_
#define BLKBENCH_AGENT_EXECUTOR_OFFSETS_H_

#include <cstdint>
#include <span>

#include "common/resolved_job.h"
#include "common/rng.h"

namespace blkbench {

struct IoGeneratorConfig {
  uint64_t region_start = 0;         // bytes; the caller checks alignment
  uint64_t region_len = 0;           // bytes, >= bs_max
  uint64_t block_size = 0;           // the smallest block size (fio min_bs); offsets align to it
  uint64_t bs_max = 0;               // 0 or block_size: fixed size; else bsrange up to it
  const BsShare* bssplit = nullptr;  // points into the RunPlan's ResolvedJob; null = none
  uint32_t bssplit_len = 0;
  // Writes' sizes where fio's per-direction bs/bsrange/bssplit set them apart (the four
  // above are then the reads'); write_block_size 0 = as reads.
  uint64_t write_block_size = 0;
  uint64_t write_bs_max = 0;
  const BsShare* write_bssplit = nullptr;
  uint32_t write_bssplit_len = 0;
  // fio blockalign per direction: what random offsets align to; 0 = the direction's
  // smallest size.
  uint64_t block_align = 0;
  uint64_t write_block_align = 0;
  bool random = false;
  // Random offsets cover every block once per pass (fio's random map) instead of drawing
  // with replacement (norandommap). Only with a fixed block size and uniform offsets.
  bool random_map = false;
  RandomDist distribution = RandomDist::kRandom;
  double dist_param = 0;
  double dist_center = -1;
  double zipf_zetan = 0;             // fio zipf_update's zeta(n, theta), computed by BuildRunPlan
  std::span<const ZoneSplit> zones;  // kZoned/kZonedAbs; points into the RunPlan's ResolvedJob
  uint32_t read_percent = 100;       // 100 = reads only, 0 = writes only
  uint64_t seed = 0;
};

// fio zipf_update: zeta(n, theta) over at most ZIPF_MAX_GEN terms, as fio caps it.
double ZipfZeta(uint64_t n, double theta);

struct NextIo {
  uint64_t offset;
  bool write;
  uint32_t len = 0;  // bytes
};

// Random offsets: with the random map, a pass visits each bs-aligned block of the region
// exactly once in a seeded pseudo-random order (a keyed bijection on the next power of two,
// cycle-walked into [0, blocks): O(1) state instead of fio's axmap bitmap, same coverage);
// the next pass uses a new order. Without it (norandommap), uniform with replacement; with
// zipf/pareto/normal, fio's generators over the blocks; with zoned/zoned_abs, a zone by
// its share of the accesses, then a uniform block inside it (ZonedPosition). Sequential offsets
// advance by the block size from region start and wrap at region end, separately per direction like
// fio's per-ddir f->last_pos. Mixed modes pick the direction per I/O: read when a uniform draw in
// [1, 100] is <= read_percent (fio get_rand_ddir, without fio's rwmix_issues run-length
// smoothing).
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
    if (variable_) return NextVariable(write);
    if (random_) {
      const uint64_t block = map_ ? NextMapped() : skewed_ ? NextSkewed(blocks_, bs_) : Uniform();
      return {start_ + block * bs_, write, len_};
    }
    uint64_t& pos = seq_pos_[write];
    const uint64_t off = start_ + pos;
    pos += bs_;
    if (pos >= blocks_ * bs_) pos = 0;
    return {off, write, len_};
  }

 private:
  uint64_t Uniform() { return offset_rng_.Uniform(blocks_); }
  // The next block of this pass (see the class comment).
  uint64_t NextMapped() {
    for (;;) {
      if (perm_next_ > perm_mask_) {
        perm_next_ = 0;
        Rekey();
      }
      const uint64_t x = Permute(perm_next_++);
      if (x < blocks_) return x;
    }
  }
  // A bijection on [0, 2^k): xor/add keys, odd multipliers and xor-shifts, each invertible
  // modulo 2^k.
  uint64_t Permute(uint64_t x) const {
    for (const Round& r : rounds_) {
      x = ((x ^ r.xor_key) * r.mul) & perm_mask_;
      x ^= x >> perm_shift_;
    }
    return x;
  }
  void Rekey();
  uint64_t NextSkewed(uint64_t n, uint64_t unit);
  NextIo NextVariable(bool write);
  uint32_t NextLen(bool write);

  struct Round {
    uint64_t xor_key, mul;
  };
  uint64_t start_, bs_, blocks_;
  uint32_t len_;
  bool random_, map_, skewed_, variable_;
  uint32_t read_percent_;
  uint64_t seq_pos_[2] = {0, 0};
  // Random map.
  uint64_t perm_mask_ = 0, perm_next_ = 0;
  int perm_shift_ = 1;
  Round rounds_[3] = {};
  // Distributions and block sizes.
  RandomDist dist_;
  double param_, center_, zetan_, zipf_alpha_ = 0, zipf_eta_ = 0, pareto_pow_ = 0;
  // Per direction [read, write]: random offsets' alignment, smallest and largest size,
  // bssplit.
  uint64_t unit_[2], min_[2], max_[2];
  const BsShare* split_[2];
  uint32_t split_len_[2];
  std::span<const ZoneSplit> zones_;
  uint64_t region_len_;
  Rng offset_rng_;
  Rng ddir_rng_;
  Rng size_rng_;
  Rng key_rng_;
};

}  // namespace blkbench

#endif  // BLKBENCH_AGENT_EXECUTOR_OFFSETS_H_
