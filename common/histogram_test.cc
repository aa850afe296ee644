// Tests for LatencyHistogram: bucket math, percentile accuracy against exact order
// statistics, exact merge, proto round trip and rejection of malformed protos.
#include "common/histogram.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <random>
#include <vector>

#include "gtest/gtest.h"

namespace blkbench {
namespace {

using H = LatencyHistogram;

TEST(HistogramBuckets, EdgeValues) {
  EXPECT_EQ(H::BucketIndex(0), 0u);
  EXPECT_EQ(H::BucketIndex(1), 1u);
  EXPECT_EQ(H::BucketIndex(127), 127u);
  EXPECT_EQ(H::BucketIndex(128), 128u);
  EXPECT_EQ(H::BucketIndex(129), 128u);  // width-2 buckets from 128 on
  EXPECT_EQ(H::BucketIndex(130), 129u);
  EXPECT_EQ(H::BucketIndex(255), 191u);
  EXPECT_EQ(H::BucketIndex(256), 192u);
  EXPECT_EQ(H::BucketIndex((uint64_t{1} << 34) - 1), static_cast<uint32_t>(H::kBuckets - 1));
  EXPECT_EQ(H::BucketIndex(uint64_t{1} << 34), static_cast<uint32_t>(H::kBuckets - 1));
  EXPECT_EQ(H::BucketIndex(UINT64_MAX), static_cast<uint32_t>(H::kBuckets - 1));
  EXPECT_EQ(H::BucketValue(0), 0u);
  EXPECT_EQ(H::BucketValue(127), 127u);
  EXPECT_EQ(H::BucketValue(128), 129u);  // midpoint of [128, 129]
  EXPECT_EQ(H::BucketUpperBound(H::kBuckets - 1), UINT64_MAX);
}

// Every bucket's bounds map back to it, buckets tile the range without gaps, and the
// representative value is within 1/128 of every value in the bucket.
TEST(HistogramBuckets, BoundsTileTheRangeWithinError) {
  for (uint32_t i = 0; i + 1 < static_cast<uint32_t>(H::kBuckets); ++i) {
    const uint64_t lo = H::BucketLowerBound(i), hi = H::BucketUpperBound(i);
    ASSERT_EQ(H::BucketIndex(lo), i);
    ASSERT_EQ(H::BucketIndex(hi), i);
    ASSERT_EQ(H::BucketLowerBound(i + 1), hi + 1) << i;
    const uint64_t v = H::BucketValue(i);
    ASSERT_LE(lo, v);
    ASSERT_LE(v, hi);
    ASSERT_LE(static_cast<double>(v - lo), static_cast<double>(lo) / 128.0) << i;
    ASSERT_LE(static_cast<double>(hi - v), static_cast<double>(hi) / 128.0) << i;
  }
}

TEST(Histogram, EmptyAndSingle) {
  H h;
  EXPECT_EQ(h.count(), 0u);
  EXPECT_EQ(h.min_ns(), 0u);
  EXPECT_EQ(h.Percentile(50), 0u);
  h.Add(1000);
  EXPECT_EQ(h.count(), 1u);
  EXPECT_EQ(h.min_ns(), 1000u);
  EXPECT_EQ(h.max_ns(), 1000u);
  EXPECT_EQ(h.Percentile(1), 1000u);  // clamped to [min, max]
  EXPECT_EQ(h.Percentile(100), 1000u);
  EXPECT_DOUBLE_EQ(h.mean_ns(), 1000.0);
}

TEST(Histogram, HugeValuesLandInLastBucketWithExactMax) {
  H h;
  h.Add(10);
  h.Add(uint64_t{1} << 40);
  h.Add(UINT64_MAX / 4);
  EXPECT_EQ(h.max_ns(), UINT64_MAX / 4);
  EXPECT_EQ(h.Percentile(100), H::BucketValue(H::kBuckets - 1));
  EXPECT_EQ(h.Percentile(10), 10u);
  v1::Histogram pb;
  h.ToProto(&pb);
  ASSERT_EQ(pb.bucket_index_size(), 2);
  EXPECT_EQ(pb.bucket_count(1), 2u);
  auto back = H::FromProto(pb);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->max_ns(), UINT64_MAX / 4);
}

struct Distribution {
  const char* name;
  std::function<uint64_t(std::mt19937_64&)> draw;
};

std::vector<Distribution> Distributions() {
  return {
      {"small_uniform",
       [](std::mt19937_64& g) { return std::uniform_int_distribution<uint64_t>(0, 300)(g); }},
      {"uniform_10us_1ms",
       [](std::mt19937_64& g) {
         return std::uniform_int_distribution<uint64_t>(10'000, 1'000'000)(g);
       }},
      {"exponential_100us",
       [](std::mt19937_64& g) {
         return static_cast<uint64_t>(std::exponential_distribution<double>(1e-5)(g));
       }},
      {"lognormal",
       [](std::mt19937_64& g) {
         return static_cast<uint64_t>(std::lognormal_distribution<double>(11.0, 1.5)(g));
       }},
      // Heavy tail: Pareto(alpha = 1.1) from 20 us, capped inside the covered range.
      {"pareto_heavy_tail",
       [](std::mt19937_64& g) {
         const double u = std::uniform_real_distribution<double>(0.0, 1.0)(g);
         const double v = 20'000.0 / std::pow(1.0 - u, 1.0 / 1.1);
         return static_cast<uint64_t>(std::min(v, 1.5e10));
       }},
  };
}

// Percentiles in thousandths of a percent so the exact rank is integer arithmetic.
constexpr uint64_t kPerMille[] = {1000, 10000, 50000, 90000, 99000, 99900, 99990, 100000};

TEST(Histogram, PercentilesWithinBucketErrorOfExact) {
  constexpr uint64_t kN = 200'000;  // makes every rank below an integer
  for (const Distribution& d : Distributions()) {
    std::mt19937_64 gen(42);
    std::vector<uint64_t> values(kN);
    H h;
    for (uint64_t& v : values) {
      v = d.draw(gen);
      h.Add(v);
    }
    std::sort(values.begin(), values.end());
    EXPECT_EQ(h.min_ns(), values.front()) << d.name;
    EXPECT_EQ(h.max_ns(), values.back()) << d.name;
    for (uint64_t pm : kPerMille) {
      const uint64_t rank = (pm * kN + 99'999) / 100'000;  // ceil(p/100 * n)
      const double exact = static_cast<double>(values[rank - 1]);
      const double got = static_cast<double>(h.Percentile(static_cast<double>(pm) / 1000.0));
      EXPECT_LE(std::fabs(got - exact), exact / 128.0 + 1e-9)
          << d.name << " p" << static_cast<double>(pm) / 1000.0 << " exact=" << exact
          << " got=" << got;
    }
  }
}

TEST(Histogram, PercentileRankIsNotPushedUpByRounding) {
  H h;
  for (uint64_t v = 1; v <= 1000; ++v) h.Add(v * 1000);
  // 99.9 % of 1000 is exactly the 999th value; floating point gives 999.0000000000001.
  EXPECT_EQ(H::BucketIndex(h.Percentile(99.9)), H::BucketIndex(999'000));
  EXPECT_EQ(H::BucketIndex(h.Percentile(50)), H::BucketIndex(500'000));
}

TEST(Histogram, MergeOfPartsEqualsWhole) {
  std::mt19937_64 gen(7);
  H whole;
  H parts[4];
  for (int i = 0; i < 100'000; ++i) {
    const uint64_t v = static_cast<uint64_t>(std::lognormal_distribution<double>(10.0, 2.0)(gen));
    whole.Add(v);
    parts[i % 4].Add(v);
  }
  H merged;
  for (const H& p : parts) merged.Merge(p);
  merged.Merge(H());  // merging an empty histogram changes nothing
  v1::Histogram a, b;
  whole.ToProto(&a);
  merged.ToProto(&b);
  EXPECT_EQ(a.SerializeAsString(), b.SerializeAsString());
  EXPECT_EQ(whole.min_ns(), merged.min_ns());
  EXPECT_EQ(whole.max_ns(), merged.max_ns());
  EXPECT_EQ(whole.mean_ns(), merged.mean_ns());
  for (double p : {50.0, 99.0, 99.99}) EXPECT_EQ(whole.Percentile(p), merged.Percentile(p));
}

TEST(Histogram, ProtoRoundTrip) {
  std::mt19937_64 gen(3);
  H h;
  for (int i = 0; i < 5000; ++i)
    h.AddN(std::uniform_int_distribution<uint64_t>(0, 1 << 30)(gen), 3);
  v1::Histogram pb;
  h.ToProto(&pb);
  EXPECT_EQ(pb.count(), 15000u);
  auto back = H::FromProto(pb);
  ASSERT_TRUE(back.ok()) << back.status();
  v1::Histogram pb2;
  back->ToProto(&pb2);
  EXPECT_EQ(pb.SerializeAsString(), pb2.SerializeAsString());

  v1::Histogram empty;
  H().ToProto(&empty);
  EXPECT_EQ(empty.bucket_index_size(), 0);
  EXPECT_TRUE(H::FromProto(empty).ok());
}

TEST(Histogram, FromProtoRejectsBadInput) {
  H h;
  h.Add(100);
  h.Add(5000);
  v1::Histogram good;
  h.ToProto(&good);
  ASSERT_TRUE(H::FromProto(good).ok());

  auto expect_bad = [](const v1::Histogram& pb, const char* what) {
    auto r = H::FromProto(pb);
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << what;
  };
  v1::Histogram pb = good;
  pb.add_bucket_index(7);
  expect_bad(pb, "length mismatch");
  pb = good;
  pb.set_bucket_index(1, H::kBuckets);
  expect_bad(pb, "index out of range");
  pb = good;
  pb.set_bucket_index(0, pb.bucket_index(1));
  expect_bad(pb, "duplicate index");
  pb = good;
  std::swap(*pb.mutable_bucket_index()->Mutable(0), *pb.mutable_bucket_index()->Mutable(1));
  expect_bad(pb, "unsorted");
  pb = good;
  pb.set_count(3);
  expect_bad(pb, "count mismatch");
  pb = good;
  pb.set_bucket_count(0, 0);
  pb.set_count(1);
  expect_bad(pb, "zero count");
  pb = good;
  pb.set_min_ns(50);
  expect_bad(pb, "min outside first bucket");
  pb = good;
  pb.set_max_ns(9000);
  expect_bad(pb, "max outside last bucket");
  pb = good;
  pb.set_sum_ns(std::nan(""));
  expect_bad(pb, "nan sum");
  pb = good;
  pb.set_bucket_count(0, UINT64_MAX);
  expect_bad(pb, "overflow");
  v1::Histogram empty;
  empty.set_max_ns(5);
  expect_bad(empty, "empty with max");
}

TEST(Histogram, FromBucketsMatchesAdd) {
  H h;
  std::array<uint64_t, H::kBuckets> dense{};
  for (uint64_t v : {0ull, 1ull, 127ull, 128ull, 1000ull, 1ull << 33}) {
    h.Add(v);
    dense[H::BucketIndex(v)]++;
  }
  auto built = H::FromBuckets(dense, h.min_ns(), h.max_ns(), h.mean_ns() * 6);
  ASSERT_TRUE(built.ok()) << built.status();
  v1::Histogram a, b;
  h.ToProto(&a);
  built->ToProto(&b);
  EXPECT_EQ(a.SerializeAsString(), b.SerializeAsString());
}

}  // namespace
}  // namespace blkbench
