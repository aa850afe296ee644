// Tests for the per-job I/O generator: region, alignment, wrap-around, rwmix and
// determinism.
#include "agent/executor/offsets.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <vector>

#include "gtest/gtest.h"

namespace blkbench {
namespace {

IoGeneratorConfig Config(bool random, uint32_t read_percent) {
  IoGeneratorConfig c;
  c.region_start = 3 * 4096;
  c.region_len = 16 * 4096 + 100;  // a partial block at the end is never used
  c.block_size = 4096;
  c.random = random;
  c.read_percent = read_percent;
  c.seed = 0x89;
  return c;
}

TEST(IoGenerator, RandomOffsetsAlignedInsideRegionAndRoughlyUniform) {
  IoGenerator g(Config(true, 100));
  std::map<uint64_t, int> hits;
  constexpr int kN = 160'000;
  for (int i = 0; i < kN; ++i) {
    const NextIo io = g.Next();
    ASSERT_FALSE(io.write);
    ASSERT_GE(io.offset, 3u * 4096);
    ASSERT_LE(io.offset + 4096, 3u * 4096 + 16 * 4096);
    ASSERT_EQ((io.offset - 3 * 4096) % 4096, 0u);
    hits[io.offset]++;
  }
  ASSERT_EQ(hits.size(), 16u);
  for (const auto& [off, n] : hits) {
    EXPECT_NEAR(n, kN / 16.0, kN / 160.0) << off;  // within 10 % of uniform
  }
}

TEST(IoGenerator, SameSeedSameSequenceOtherSeedDiffers) {
  IoGeneratorConfig c = Config(true, 50);
  IoGenerator a(c), b(c);
  c.seed += 1;
  IoGenerator other(c);
  int same_as_other = 0;
  for (int i = 0; i < 1000; ++i) {
    const NextIo x = a.Next(), y = b.Next(), z = other.Next();
    ASSERT_EQ(x.offset, y.offset);
    ASSERT_EQ(x.write, y.write);
    same_as_other += x.offset == z.offset && x.write == z.write;
  }
  EXPECT_LT(same_as_other, 200);
}

TEST(IoGenerator, SequentialWrapsAtRegionEnd) {
  IoGenerator g(Config(false, 100));
  for (int round = 0; round < 3; ++round) {
    for (uint64_t b = 0; b < 16; ++b) ASSERT_EQ(g.Next().offset, (3 + b) * 4096);
  }
}

TEST(IoGenerator, RwmixFractionAndPerDirectionSequentialPositions) {
  IoGenerator g(Config(false, 70));
  constexpr int kN = 100'000;
  int reads = 0;
  uint64_t expect[2] = {3 * 4096, 3 * 4096};
  for (int i = 0; i < kN; ++i) {
    const NextIo io = g.Next();
    reads += !io.write;
    ASSERT_EQ(io.offset, expect[io.write]);  // each direction advances on its own
    expect[io.write] += 4096;
    if (expect[io.write] == 19 * 4096) expect[io.write] = 3 * 4096;
  }
  EXPECT_NEAR(static_cast<double>(reads) / kN, 0.70, 0.01);
  IoGenerator writes_only(Config(true, 0));
  for (int i = 0; i < 1000; ++i) ASSERT_TRUE(writes_only.Next().write);
}

// fio's random map: a pass over the region's blocks touches each exactly once; the next
// pass is another order. An odd block count exercises the cycle walk.
TEST(IoGenerator, RandomMapCoversEveryBlockOncePerPass) {
  IoGeneratorConfig c = Config(true, 100);
  c.region_len = 1000 * 4096;
  c.random_map = true;
  IoGenerator g(c);
  std::vector<uint64_t> passes[3];
  for (auto& pass : passes) {
    std::set<uint64_t> seen;
    for (int i = 0; i < 1000; ++i) {
      const NextIo io = g.Next();
      ASSERT_EQ(io.len, 4096u);
      ASSERT_LT(io.offset, c.region_start + c.region_len);
      ASSERT_TRUE(seen.insert(io.offset).second) << "block repeated within a pass";
      pass.push_back(io.offset);
    }
    EXPECT_EQ(seen.size(), 1000u);
  }
  EXPECT_NE(passes[0], passes[1]);
  // Not a sequential walk in disguise: few neighbours are adjacent blocks.
  int adjacent = 0;
  for (size_t i = 1; i < passes[0].size(); ++i) {
    adjacent += passes[0][i] == passes[0][i - 1] + 4096;
  }
  EXPECT_LT(adjacent, 50);
  // norandommap draws with replacement: a pass-length draw repeats blocks (about 1/e of
  // the blocks are never hit).
  c.random_map = false;
  IoGenerator uniform(c);
  std::set<uint64_t> seen;
  for (int i = 0; i < 1000; ++i) seen.insert(uniform.Next().offset);
  EXPECT_LT(seen.size(), 700u);
  EXPECT_GT(seen.size(), 560u);
}

// Counts of each block index over n draws of `c`.
std::vector<int> Hits(IoGeneratorConfig c, int n) {
  IoGenerator g(c);
  std::vector<int> hits(c.region_len / c.block_size);
  for (int i = 0; i < n; ++i) ++hits[(g.Next().offset - c.region_start) / c.block_size];
  return hits;
}

// Share of all hits that land on the hottest `fraction` of the blocks.
double HotShare(std::vector<int> hits, double fraction) {
  std::sort(hits.rbegin(), hits.rend());
  const size_t top = static_cast<size_t>(hits.size() * fraction);
  double total = 0, hot = 0;
  for (size_t i = 0; i < hits.size(); ++i) {
    total += hits[i];
    if (i < top) hot += hits[i];
  }
  return hot / total;
}

// Share of all hits that land on the first `fraction` of the blocks.
double FirstShare(const std::vector<int>& hits, double fraction) {
  const size_t first = static_cast<size_t>(hits.size() * fraction);
  double total = 0, hot = 0;
  for (size_t i = 0; i < hits.size(); ++i) {
    total += hits[i];
    if (i < first) hot += hits[i];
  }
  return hot / total;
}

TEST(IoGenerator, ZipfAndParetoConcentrateOnFewBlocks) {
  IoGeneratorConfig c = Config(true, 100);
  c.region_len = 10000 * 4096;
  c.distribution = RandomDist::kZipf;
  c.dist_param = 1.2;
  c.zipf_zetan = ZipfZeta(10000, 1.2);
  // zipf 1.2 over 10k items: the top 1 % hold well over half of the probability mass
  // (sum_{i<=100} i^-1.2 / zeta(10000, 1.2) ~ 3.60 / 4.80 = 0.75).
  const std::vector<int> zipf = Hits(c, 200'000);
  EXPECT_NEAR(HotShare(zipf, 0.01), 0.75, 0.06);
  EXPECT_EQ(zipf, Hits(c, 200'000));  // deterministic from the seed
  // With a center of 0 the ranks are not scattered: rank r is block r, so the first 20 %
  // of the region is the hot 20 %. pareto 0.2 (fio's default) is the classic 80/20.
  c.distribution = RandomDist::kPareto;
  c.dist_param = 0.2;
  c.dist_center = 0;
  EXPECT_NEAR(FirstShare(Hits(c, 200'000), 0.2), 0.8, 0.01);
  c.distribution = RandomDist::kRandom;
  EXPECT_NEAR(FirstShare(Hits(c, 200'000), 0.2), 0.2, 0.01);
}

TEST(IoGenerator, NormalWithCenterIsAGaussianOverTheRegion) {
  IoGeneratorConfig c = Config(true, 100);
  c.region_len = 10000 * 4096;
  c.distribution = RandomDist::kNormal;
  c.dist_param = 10;     // standard deviation: 10 % of the region
  c.dist_center = 0.25;  // mean at a quarter
  const std::vector<int> hits = Hits(c, 100'000);
  double within = 0;
  for (int b = 1500; b < 3500; ++b) within += hits[b];
  EXPECT_NEAR(within / 100'000, 0.6827, 0.015);  // one sigma either side
}

TEST(IoGenerator, BssplitAndBsrangeSizes) {
  const BsShare split[] = {{4096, 25}, {16384, 75}};
  IoGeneratorConfig c = Config(true, 100);
  c.region_len = 1000 * 4096;
  c.bssplit = split;
  c.bssplit_len = 2;
  c.bs_max = 16384;
  IoGenerator g(c);
  constexpr int kN = 40'000;
  int small = 0;
  for (int i = 0; i < kN; ++i) {
    const NextIo io = g.Next();
    ASSERT_TRUE(io.len == 4096 || io.len == 16384) << io.len;
    ASSERT_EQ((io.offset - c.region_start) % 4096, 0u);
    ASSERT_LE(io.offset + io.len, c.region_start + c.region_len);
    small += io.len == 4096;
  }
  // Binomial: 5 standard deviations of the 25 % share.
  EXPECT_NEAR(static_cast<double>(small) / kN, 0.25, 5 * std::sqrt(0.25 * 0.75 / kN));

  IoGeneratorConfig r = Config(false, 100);
  r.region_len = 1000 * 4096 + 100;
  r.bs_max = 16384;
  IoGenerator range(r);
  std::map<uint32_t, int> sizes;
  uint64_t expect = r.region_start;
  for (int i = 0; i < kN; ++i) {
    const NextIo io = range.Next();
    if (io.offset != expect) {
      ASSERT_EQ(io.offset, r.region_start);  // wrapped: the next one would cross the end
      ASSERT_GT(expect + io.len, r.region_start + 1000 * 4096);
    }
    ASSERT_LE(io.offset + io.len, r.region_start + r.region_len);
    expect = io.offset + io.len;
    ++sizes[io.len];
  }
  ASSERT_EQ(sizes.size(), 4u);  // 4k, 8k, 12k, 16k: multiples of the minimum
  for (const auto& [len, n] : sizes) {
    EXPECT_EQ(len % 4096, 0u);
    EXPECT_NEAR(static_cast<double>(n) / kN, 0.25, 5 * std::sqrt(0.25 * 0.75 / kN)) << len;
  }
}

TEST(Rng, UniformStaysBelow) {
  Rng r(1);
  for (uint64_t n : {1ull, 2ull, 3ull, 1000ull, 1ull << 40}) {
    for (int i = 0; i < 1000; ++i) ASSERT_LT(r.Uniform(n), n);
  }
}

}  // namespace
}  // namespace blkbench
