// Latency histogram with fio's log-linear bucketing, mergeable exactly across jobs,
// intervals and hosts. Percentiles are always computed from (merged) histograms.
#ifndef BLKBENCH_COMMON_HISTOGRAM_H_
#define BLKBENCH_COMMON_HISTOGRAM_H_

#include <algorithm>
#include <array>
#include <bit>
#include <cassert>
#include <cstdint>
#include <span>

#include "absl/status/statusor.h"
#include "blkbench/v1/metrics.pb.h"

namespace blkbench {

// Why this shape (fio stat.h, "EXECUTIVE SUMMARY"): values below 2^(kBits+1) get a
// bucket each; above that, every power-of-two group is split into 2^kBits equal
// buckets, so the relative error of a bucket's midpoint is at most 1/2^(kBits+1)
// (<= 0.8 %). The index is O(1) from count-leading-zeros. 29 groups of 64 cover
// latencies up to ~2^34 ns (~17 s); larger values land in the last bucket.
// Values are nanoseconds. Not thread-safe: one histogram per job/thread, then Merge.
class LatencyHistogram {
 public:
  static constexpr int kBits = 6;
  static constexpr int kBucketsPerGroup = 1 << kBits;  // 64
  static constexpr int kGroups = 29;
  static constexpr int kBuckets = kGroups * kBucketsPerGroup;  // 1856

  // Bucket of a value, and the representative (midpoint) value of a bucket.
  static uint32_t BucketIndex(uint64_t ns);
  static uint64_t BucketValue(uint32_t index);
  // Smallest and largest value that map to `index` (the last bucket also holds every
  // value beyond the covered range, so its upper bound is UINT64_MAX).
  static uint64_t BucketLowerBound(uint32_t index);
  static uint64_t BucketUpperBound(uint32_t index);

  // Inline (with BucketIndex): the engine adds every I/O's latency to several
  // histograms, and inlined the bucket is computed once for all of them.
  void Add(uint64_t ns) { AddN(ns, 1); }
  // Add(ns) with its bucket computed by the caller, for one value added to several
  // histograms. REQUIRES: bucket == BucketIndex(ns).
  void AddAt(uint32_t bucket, uint64_t ns) {
    assert(bucket == BucketIndex(ns));
    ++buckets_[bucket];
    ++count_;
    sum_ += static_cast<double>(ns);
    min_ = std::min(min_, ns);
    max_ = std::max(max_, ns);
  }
  void AddN(uint64_t ns, uint64_t n) {
    if (n == 0) return;
    buckets_[BucketIndex(ns)] += n;
    count_ += n;
    // Exact as long as the running sum stays below 2^53 ns (~104 days of latency).
    sum_ += static_cast<double>(ns) * static_cast<double>(n);
    min_ = std::min(min_, ns);
    max_ = std::max(max_, ns);
  }
  // Adds every count of `other`; exact (bucket counts, count, sum, min and max).
  void Merge(const LatencyHistogram& other);
  void Clear();

  uint64_t count() const { return count_; }
  uint64_t min_ns() const { return count_ ? min_ : 0; }
  uint64_t max_ns() const { return max_; }
  double mean_ns() const { return count_ ? sum_ / static_cast<double>(count_) : 0.0; }
  // The value at percentile p (0 < p <= 100), as fio reports it: the representative
  // value of the bucket holding the ceil(p/100 * count)-th smallest sample, clamped to
  // [min, max]. 0 for an empty histogram.
  uint64_t Percentile(double p) const;

  v1::LatencySummary Summary() const;
  void ToProto(v1::Histogram* out) const;  // sparse: only non-zero buckets
  // Fails with InvalidArgument on out-of-range or unsorted bucket indexes, or counts
  // that do not add up to `count`.
  static absl::StatusOr<LatencyHistogram> FromProto(const v1::Histogram& in);
  // Builds a histogram from dense bucket counts (e.g. kept by an I/O job in shared
  // memory) and its min, max and sum. Fails with InvalidArgument when min or max do not
  // fall into the first/last non-empty bucket, or when an empty histogram has a non-zero
  // min, max or sum.
  static absl::StatusOr<LatencyHistogram> FromBuckets(std::span<const uint64_t, kBuckets> counts,
                                                      uint64_t min_ns, uint64_t max_ns,
                                                      double sum_ns);

 private:
  // Values below kLinearLimit (groups 0 and 1) get one bucket each: index == value.
  static constexpr uint64_t kLinearLimit = 2 * kBucketsPerGroup;  // 128
  static constexpr uint32_t kLastBucket = kBuckets - 1;

  std::array<uint64_t, kBuckets> buckets_{};
  uint64_t count_ = 0;
  uint64_t min_ = UINT64_MAX;
  uint64_t max_ = 0;
  double sum_ = 0;
};

// fio plat_val_to_idx: the top kBits+1 significant bits select the bucket; the most
// significant bit selects the group and the kBits below it the bucket in the group.
inline uint32_t LatencyHistogram::BucketIndex(uint64_t ns) {
  if (ns < kLinearLimit) return static_cast<uint32_t>(ns);
  const int msb = 63 - std::countl_zero(ns);  // >= kBits + 1
  const int shift = msb - kBits;              // bits below the kept ones, >= 1
  const uint32_t group = static_cast<uint32_t>(shift) + 1;
  if (group >= static_cast<uint32_t>(kGroups)) return kLastBucket;
  return group * kBucketsPerGroup + static_cast<uint32_t>((ns >> shift) & (kBucketsPerGroup - 1));
}

}  // namespace blkbench

#endif  // BLKBENCH_COMMON_HISTOGRAM_H_
