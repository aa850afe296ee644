// Tests for the deterministic RNG: reproducibility, stream independence, distributions.
#include "engine/sim/rng.h"

#include <cmath>
#include <vector>

#include "gtest/gtest.h"

namespace blkbench::engine {
namespace {

TEST(RngTest, SameSeedSameSequence) {
  Rng a(123), b(123), c(124);
  bool differs = false;
  for (int i = 0; i < 1000; ++i) {
    uint64_t x = a.Next();
    EXPECT_EQ(x, b.Next());
    differs |= x != c.Next();
  }
  EXPECT_TRUE(differs);
}

TEST(RngTest, KnownValuesPinTheAlgorithm) {
  // Pinned so that a change to the generator or its seeding (which would change every
  // experiment's results) is a deliberate test update, not an accident.
  Rng rng(0);
  EXPECT_EQ(rng.Next(), 0x99ec5f36cb75f2b4ULL);
  EXPECT_EQ(rng.Next(), 0xbf6e1f784956452aULL);
  EXPECT_EQ(rng.Next(), 0x1a5f849d4933e6e0ULL);
  EXPECT_EQ(Rng(42).Fork(3).Next(), 0x9f23e29d9ae54778ULL);
  EXPECT_EQ(Rng(5).Uniform(1000), 288u);
}

TEST(RngTest, ForkDependsOnSeedAndStreamOnly) {
  Rng parent(99);
  Rng f1 = parent.Fork(5);
  for (int i = 0; i < 100; ++i) parent.Next();
  Rng f2 = parent.Fork(5);
  Rng other = parent.Fork(6);
  for (int i = 0; i < 100; ++i) {
    uint64_t x = f1.Next();
    EXPECT_EQ(x, f2.Next());
    EXPECT_NE(x, other.Next());
  }
}

TEST(RngTest, UniformIsInRangeAndRoughlyFlat) {
  Rng rng(1);
  std::vector<int> counts(10);
  const int n = 100000;
  for (int i = 0; i < n; ++i) {
    uint64_t x = rng.Uniform(10);
    ASSERT_LT(x, 10u);
    ++counts[x];
  }
  for (int c : counts) EXPECT_NEAR(c, n / 10.0, 600);  // ~6 sigma
  for (int i = 0; i < 1000; ++i) {
    uint64_t x = rng.UniformRange(5, 7);
    ASSERT_GE(x, 5u);
    ASSERT_LE(x, 7u);
  }
  EXPECT_EQ(rng.Uniform(1), 0u);
}

TEST(RngTest, DoubleAndExponentialMoments) {
  Rng rng(2);
  const int n = 200000;
  double sum_u = 0, sum_e = 0, sum_e2 = 0;
  for (int i = 0; i < n; ++i) {
    double u = rng.NextDouble();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
    sum_u += u;
    double e = rng.Exponential(3.0);
    ASSERT_GE(e, 0.0);
    sum_e += e;
    sum_e2 += e * e;
  }
  EXPECT_NEAR(sum_u / n, 0.5, 0.005);
  double mean = sum_e / n;
  EXPECT_NEAR(mean, 3.0, 0.05);
  EXPECT_NEAR(std::sqrt(sum_e2 / n - mean * mean), 3.0, 0.08);  // stddev = mean
}

}  // namespace
}  // namespace blkbench::engine
