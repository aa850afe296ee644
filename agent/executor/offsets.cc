// Seeding and the less frequent paths of the per-job I/O generator (see offsets.h): the
// random map's keys, fio's zipf/pareto/normal/zoned generators and variable block sizes.
#include "agent/executor/offsets.h"

#include <algorithm>
#include <cmath>

namespace blkbench {
namespace {

constexpr uint64_t kZipfMaxGen = 10'000'000;  // fio lib/zipf.c ZIPF_MAX_GEN

int BitsFor(uint64_t n) {  // smallest k with 2^k >= n
  int k = 0;
  while (k < 64 && (uint64_t{1} << k) < n) ++k;
  return k;
}

}  // namespace

double ZipfZeta(uint64_t n, double theta) {
  // fio zipf_update: the normalisation constant, capped at 10M terms ("precision will
  // take a slight hit").
  double z = 0;
  const uint64_t terms = std::min(n, kZipfMaxGen);
  for (uint64_t i = 0; i < terms; ++i) z += std::pow(1.0 / static_cast<double>(i + 1), theta);
  return z;
}

// The direction stream is seeded apart from the offset stream (fio keeps a separate
// rwmix_state), so rwmixread does not change the offset sequence; block sizes have their
// own stream too (fio bsrange_state).
IoGenerator::IoGenerator(const IoGeneratorConfig& c)
    : start_(c.region_start),
      bs_(c.block_size),
      blocks_(c.region_len / c.block_size),
      len_(static_cast<uint32_t>(c.block_size)),
      random_(c.random),
      map_(c.random && c.random_map),
      skewed_(c.random && c.distribution != RandomDist::kRandom),
      variable_((c.bs_max != 0 && c.bs_max != c.block_size) || c.bssplit_len > 0 ||
                c.write_block_size != 0 || (c.block_align != 0 && c.block_align != c.block_size)),
      read_percent_(c.read_percent),
      dist_(c.distribution),
      param_(c.dist_param),
      center_(c.dist_center),
      zetan_(c.zipf_zetan),
      zones_(c.zones),
      region_len_(c.region_len),
      offset_rng_(c.seed),
      ddir_rng_(c.seed ^ 0x5eed0fd1a7a5eedULL),
      size_rng_(c.seed ^ 0xb5b5a11ce5eedULL),
      key_rng_(c.seed ^ 0x7a9d0ff5e7eedULL) {
  unit_[0] = c.block_align != 0 ? c.block_align : c.block_size;
  min_[0] = c.block_size;
  max_[0] = std::max(c.bs_max, c.block_size);
  split_[0] = c.bssplit;
  split_len_[0] = c.bssplit_len;
  const bool apart = c.write_block_size != 0;
  unit_[1] = !apart                     ? unit_[0]
             : c.write_block_align != 0 ? c.write_block_align
                                        : c.write_block_size;
  min_[1] = apart ? c.write_block_size : min_[0];
  max_[1] = apart ? std::max(c.write_bs_max, c.write_block_size) : max_[0];
  split_[1] = apart ? c.write_bssplit : split_[0];
  split_len_[1] = apart ? c.write_bssplit_len : split_len_[0];
  if (map_) {
    const int k = BitsFor(blocks_);
    perm_mask_ = k >= 64 ? ~uint64_t{0} : (uint64_t{1} << k) - 1;
    perm_shift_ = std::max(1, k / 2);
    Rekey();
  }
  if (dist_ == RandomDist::kZipf) {
    // fio zipf_init / zipf_next (Gray et al., "Quickly generating billion-record synthetic
    // databases", SIGMOD 1994).
    const double n = static_cast<double>(std::max<uint64_t>(blocks_, 1));
    const double zeta2 = 1.0 + std::pow(0.5, param_);
    zipf_alpha_ = 1.0 / (1.0 - param_);
    zipf_eta_ = (1.0 - std::pow(2.0 / n, 1.0 - param_)) / (1.0 - zeta2 / zetan_);
  } else if (dist_ == RandomDist::kPareto) {
    pareto_pow_ = std::log(param_) / std::log(1.0 - param_);  // fio pareto_init
  }
}

void IoGenerator::Rekey() {
  for (Round& r : rounds_) {
    r.xor_key = key_rng_.Next() & perm_mask_;
    r.mul = key_rng_.Next() | 1;
  }
}

// A block index in [0, n) from fio's zipf, pareto or normal generator, scattered over the
// region by a hash as fio does, so the hot blocks are not adjacent.
uint64_t IoGenerator::NextSkewed(uint64_t n, uint64_t unit) {
  if (n <= 1) return 0;
  const double dn = static_cast<double>(n);
  uint64_t rank = 0;
  switch (dist_) {
    case RandomDist::kZipf: {
      const double u = offset_rng_.NextDouble();
      const double z = u * zetan_;
      double v;
      if (z < 1.0) {
        v = 1;
      } else if (z < 1.0 + std::pow(0.5, param_)) {
        v = 2;
      } else {
        v = 1.0 + dn * std::pow(zipf_eta_ * u - zipf_eta_ + 1.0, zipf_alpha_);
      }
      rank = static_cast<uint64_t>(std::clamp(v, 1.0, dn)) - 1;
      break;
    }
    case RandomDist::kPareto:  // fio pareto_next
      rank = static_cast<uint64_t>((dn - 1) * std::pow(offset_rng_.NextDouble(), pareto_pow_));
      break;
    case RandomDist::kNormal: {
      // fio gauss_next: the mean of 12 uniform draws over [0, n], then a uniform
      // deviation of width ceil(n * dev / 100) (at most n / 2) around it, halved while it
      // would pass the end (unsigned, as fio adds it).
      uint64_t sum = 0;
      for (int i = 0; i < 12; ++i) sum += offset_rng_.Uniform(n + 1);
      sum = (sum + 11) / 12;
      const uint64_t width =
          std::min<uint64_t>(static_cast<uint64_t>(std::ceil(dn * param_ / 100.0)), n / 2);
      if (width != 0) {
        auto dev = static_cast<int64_t>(static_cast<double>(width) * offset_rng_.NextDouble()) -
                   static_cast<int64_t>(width / 2);
        while (static_cast<uint64_t>(dev) + sum >= n) dev /= 2;
        sum += static_cast<uint64_t>(dev);
      }
      rank = sum;
      break;
    }
    case RandomDist::kZoned:
    case RandomDist::kZonedAbs:
      return ZonedPosition(zones_, dist_ == RandomDist::kZonedAbs, n, unit, offset_rng_);
    case RandomDist::kRandom:
      return offset_rng_.Uniform(n);
  }
  // fio hashes the value (__hash_u64: a multiplication by the 64-bit golden ratio, which
  // spreads neighbouring values evenly) and adds rand_off, modulo n. rand_off is a 32-bit
  // random number for zipf and pareto and 0 for normal, or n * center (normal: n *
  // (center - 0.5), wrapping as fio's unsigned sum does): a center rotates the scattered
  // hot blocks, it does not gather them (fio 3.33's lib/zipf.c, lib/gauss.c).
  constexpr uint64_t kGoldenRatio64 = 0x61C8864680B583EBULL;  // fio hash.h
  uint64_t off = 0;
  if (center_ >= 0) {
    const double shift = dist_ == RandomDist::kNormal ? center_ - 0.5 : center_;
    off = static_cast<uint64_t>(static_cast<int64_t>(dn * shift));
  } else if (dist_ != RandomDist::kNormal) {
    off = Mix64(key_rng_.seed()) & 0xffffffffULL;
  }
  return (rank * kGoldenRatio64 + off) % n;
}

// fio get_next_buflen: a bssplit share, else a multiple of the minimum up to the maximum,
// for the I/O's direction.
uint32_t IoGenerator::NextLen(bool write) {
  if (split_len_[write] > 0) {
    const BsShare* split = split_[write];
    const uint64_t u = size_rng_.Uniform(100);
    uint64_t sum = 0;
    for (uint32_t i = 0; i < split_len_[write]; ++i) {
      sum += split[i].percent;
      if (u < sum) return static_cast<uint32_t>(split[i].bs);
    }
    return static_cast<uint32_t>(split[split_len_[write] - 1].bs);
  }
  const uint64_t min = min_[write];
  return static_cast<uint32_t>(min * (1 + size_rng_.Uniform(max_[write] / min)));
}

// Variable block sizes or a blockalign: random offsets aligned to the direction's
// blockalign (its smallest size unless set), the whole I/O inside the region (random: uniform or
// skewed, without the map; sequential: wrap when the next I/O would cross the end).
NextIo IoGenerator::NextVariable(bool write) {
  const uint32_t len = NextLen(write);
  if (random_) {
    const uint64_t unit = unit_[write];
    const uint64_t positions = (region_len_ - len) / unit + 1;
    const uint64_t pos = skewed_ ? NextSkewed(positions, unit) : offset_rng_.Uniform(positions);
    return {start_ + pos * unit, write, len};
  }
  uint64_t& pos = seq_pos_[write];
  if (pos + len > region_len_) pos = 0;
  const uint64_t off = start_ + pos;
  pos += len;
  return {off, write, len};
}

}  // namespace blkbench
