// Tests for the per-job I/O generator: region, alignment, wrap-around, rwmix and
// determinism.
#include "agent/executor/offsets.h"

#include <map>
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
    EXPECT_NEAR(n, kN / 16, kN / 16 / 10) << off;  // within 10 % of uniform
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

TEST(Rng, UniformStaysBelow) {
  Rng r(1);
  for (uint64_t n : {1ull, 2ull, 3ull, 1000ull, 1ull << 40}) {
    for (int i = 0; i < 1000; ++i) ASSERT_LT(r.Uniform(n), n);
  }
}

}  // namespace
}  // namespace blkbench
