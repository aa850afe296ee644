// LatencyHistogram: fio's log-linear latency buckets (fio stat.h plat_val_to_idx /
// plat_idx_to_val), percentiles, exact merge and the sparse proto form.
#include "common/histogram.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace blkbench {
namespace {

// Rank (1-based) of the sample at percentile p of n samples: ceil(p/100 * n). p/100 * n
// is computed in floating point, so a product that is an integer up to rounding noise
// (99.9 % of 1000 = 999.0000000000001) is taken as that integer rather than rounded up.
uint64_t PercentileRank(double p, uint64_t n) {
  const long double x = static_cast<long double>(p) / 100.0L * static_cast<long double>(n);
  const long double nearest = std::nearbyint(x);
  uint64_t rank;
  if (std::fabs(x - nearest) <= 1e-9L * std::max(1.0L, x)) {
    rank = static_cast<uint64_t>(nearest);
  } else {
    rank = static_cast<uint64_t>(std::ceil(x));
  }
  return std::clamp<uint64_t>(rank, 1, n);
}

}  // namespace

uint64_t LatencyHistogram::BucketLowerBound(uint32_t index) {
  if (index >= kBuckets) index = kLastBucket;
  if (index < kLinearLimit) return index;
  const uint32_t shift = index / kBucketsPerGroup - 1;
  const uint64_t offset = index % kBucketsPerGroup;
  return (uint64_t{1} << (shift + kBits)) + (offset << shift);
}

uint64_t LatencyHistogram::BucketUpperBound(uint32_t index) {
  if (index >= kLastBucket) return std::numeric_limits<uint64_t>::max();
  if (index < kLinearLimit) return index;
  const uint32_t shift = index / kBucketsPerGroup - 1;
  return BucketLowerBound(index) + (uint64_t{1} << shift) - 1;
}

// fio plat_idx_to_val: the midpoint of the bucket, so the error is at most half a bucket
// width, i.e. 2^(shift-1) / 2^(shift+kBits) = 1/128 of the value.
uint64_t LatencyHistogram::BucketValue(uint32_t index) {
  if (index >= kBuckets) index = kLastBucket;
  if (index < kLinearLimit) return index;
  const uint32_t shift = index / kBucketsPerGroup - 1;
  return BucketLowerBound(index) + (uint64_t{1} << (shift - 1));
}

void LatencyHistogram::Merge(const LatencyHistogram& other) {
  if (other.count_ == 0) return;
  for (int i = 0; i < kBuckets; ++i) buckets_[i] += other.buckets_[i];
  count_ += other.count_;
  sum_ += other.sum_;
  min_ = std::min(min_, other.min_);
  max_ = std::max(max_, other.max_);
}

void LatencyHistogram::Clear() { *this = LatencyHistogram(); }

// fio calc_clat_percentiles: the first bucket whose cumulative count reaches
// p/100 * count; we additionally clamp to the exact [min, max].
uint64_t LatencyHistogram::Percentile(double p) const {
  if (count_ == 0) return 0;
  const uint64_t rank = PercentileRank(std::clamp(p, 0.0, 100.0), count_);
  uint64_t seen = 0;
  for (uint32_t i = 0; i < static_cast<uint32_t>(kBuckets); ++i) {
    seen += buckets_[i];
    if (seen >= rank) return std::clamp(BucketValue(i), min_, max_);
  }
  return max_;  // unreachable while count_ equals the sum of the buckets
}

v1::LatencySummary LatencyHistogram::Summary() const {
  v1::LatencySummary s;
  s.set_min_ns(min_ns());
  s.set_max_ns(max_ns());
  s.set_mean_ns(mean_ns());
  s.set_p50_ns(Percentile(50));
  s.set_p90_ns(Percentile(90));
  s.set_p99_ns(Percentile(99));
  s.set_p999_ns(Percentile(99.9));
  s.set_p9999_ns(Percentile(99.99));
  return s;
}

void LatencyHistogram::ToProto(v1::Histogram* out) const {
  out->Clear();
  for (uint32_t i = 0; i < static_cast<uint32_t>(kBuckets); ++i) {
    if (buckets_[i] == 0) continue;
    out->add_bucket_index(i);
    out->add_bucket_count(buckets_[i]);
  }
  out->set_count(count_);
  out->set_min_ns(min_ns());
  out->set_max_ns(max_ns());
  out->set_sum_ns(sum_);
}

absl::StatusOr<LatencyHistogram> LatencyHistogram::FromBuckets(
    std::span<const uint64_t, kBuckets> counts, uint64_t min_ns, uint64_t max_ns, double sum_ns) {
  LatencyHistogram h;
  uint32_t first = kBuckets, last = 0;
  for (uint32_t i = 0; i < static_cast<uint32_t>(kBuckets); ++i) {
    if (counts[i] == 0) continue;
    if (h.count_ + counts[i] < h.count_) {
      return absl::InvalidArgumentError("histogram: bucket counts overflow 64 bits");
    }
    h.buckets_[i] = counts[i];
    h.count_ += counts[i];
    first = std::min(first, i);
    last = i;
  }
  if (!std::isfinite(sum_ns) || sum_ns < 0) {
    return absl::InvalidArgumentError(absl::StrCat("histogram: bad sum_ns ", sum_ns));
  }
  if (h.count_ == 0) {
    if (min_ns != 0 || max_ns != 0 || sum_ns != 0) {
      return absl::InvalidArgumentError("histogram: empty but min/max/sum are not zero");
    }
    return h;
  }
  if (min_ns > max_ns || BucketIndex(min_ns) != first || BucketIndex(max_ns) != last) {
    return absl::InvalidArgumentError(
        absl::StrCat("histogram: min ", min_ns, " / max ", max_ns,
                     " do not fall into the first/last non-empty buckets ", first, "/", last));
  }
  h.min_ = min_ns;
  h.max_ = max_ns;
  h.sum_ = sum_ns;
  return h;
}

absl::StatusOr<LatencyHistogram> LatencyHistogram::FromProto(const v1::Histogram& in) {
  if (in.bucket_index_size() != in.bucket_count_size()) {
    return absl::InvalidArgumentError(absl::StrCat("histogram: ", in.bucket_index_size(),
                                                   " bucket indexes but ", in.bucket_count_size(),
                                                   " counts"));
  }
  std::array<uint64_t, kBuckets> dense{};
  uint64_t total = 0;
  int64_t prev = -1;
  for (int i = 0; i < in.bucket_index_size(); ++i) {
    const uint32_t idx = in.bucket_index(i);
    const uint64_t n = in.bucket_count(i);
    if (idx >= static_cast<uint32_t>(kBuckets)) {
      return absl::InvalidArgumentError(
          absl::StrCat("histogram: bucket index ", idx, " out of range [0, ", kBuckets, ")"));
    }
    if (static_cast<int64_t>(idx) <= prev) {
      return absl::InvalidArgumentError(
          absl::StrCat("histogram: bucket indexes not strictly increasing at ", idx));
    }
    if (n == 0) {
      return absl::InvalidArgumentError(absl::StrCat("histogram: zero count for bucket ", idx));
    }
    if (total + n < total) return absl::InvalidArgumentError("histogram: counts overflow");
    total += n;
    dense[idx] = n;
    prev = idx;
  }
  if (total != in.count()) {
    return absl::InvalidArgumentError(
        absl::StrCat("histogram: bucket counts add up to ", total, " but count is ", in.count()));
  }
  return FromBuckets(dense, in.min_ns(), in.max_ns(), in.sum_ns());
}

}  // namespace blkbench
