// Tests for interval samples and the final result built from jobs' shared stats,
// driving JobShared by hand (no I/O).
#include "agent/executor/run_stats.h"

#include <vector>

#include "agent/executor/job.h"
#include "gtest/gtest.h"

namespace blkbench {
namespace {

using H = LatencyHistogram;

// Records like a job does: buckets per I/O, scalars on Flush.
void Complete(JobShared& j, int dir, std::initializer_list<uint64_t> lats) {
  LatencyRecorder rec(j);
  for (uint64_t l : lats) rec.Record(dir, l, 4096);
  rec.Flush();
}

TEST(IntervalHistogram, ExactBucketsAndNewMinMax) {
  Totals prev, cur;
  H all;
  for (uint64_t v : {1000u, 1010u, 50'000u}) {
    cur.buckets[H::BucketIndex(v)]++;
    cur.sum_ns += v;
    all.Add(v);
  }
  cur.min_ns = 1000;
  cur.max_ns = 50'000;
  v1::Histogram h;
  IntervalHistogram(prev, cur, &h);
  EXPECT_EQ(h.count(), 3u);
  EXPECT_EQ(h.min_ns(), 1000u);  // a new running min/max: exact
  EXPECT_EQ(h.max_ns(), 50'000u);
  EXPECT_DOUBLE_EQ(h.sum_ns(), 52'010.0);
  ASSERT_TRUE(H::FromProto(h).ok());

  // Next interval: one I/O that set no new record → bucket bounds, still valid.
  Totals next = cur;
  next.buckets[H::BucketIndex(20'000)]++;
  next.sum_ns += 20'000;
  IntervalHistogram(cur, next, &h);
  EXPECT_EQ(h.count(), 1u);
  EXPECT_EQ(h.min_ns(), H::BucketLowerBound(H::BucketIndex(20'000)));
  EXPECT_EQ(h.max_ns(), H::BucketUpperBound(H::BucketIndex(20'000)));
  EXPECT_DOUBLE_EQ(h.sum_ns(), 20'000.0);
  ASSERT_TRUE(H::FromProto(h).ok());
}

TEST(IntervalHistogram, TornSnapshotStaysValid) {
  Totals prev, cur;
  // The scalar sum already has an I/O whose bucket is not visible yet, and no bucket
  // changed at all: the sample must be empty with sum 0.
  cur.sum_ns = 123'456;
  v1::Histogram h;
  IntervalHistogram(prev, cur, &h);
  EXPECT_EQ(h.count(), 0u);
  EXPECT_EQ(h.sum_ns(), 0.0);
  ASSERT_TRUE(H::FromProto(h).ok());
  // A bucket is visible but the sum lags: the sum is clamped into the bucket's range.
  cur.buckets[H::BucketIndex(5000)] = 1;
  cur.sum_ns = 0;
  IntervalHistogram(prev, cur, &h);
  EXPECT_GE(h.sum_ns(), static_cast<double>(H::BucketLowerBound(H::BucketIndex(5000))));
  ASSERT_TRUE(H::FromProto(h).ok());
}

TEST(Sampler, SequenceAndDeltasAddUpToResult) {
  auto area = SharedArea::Create(2, 0);
  ASSERT_TRUE(area.ok());
  SharedArea& a = **area;
  std::vector<v1::Sample> samples;
  // Two named jobs of one thread each: each sample also holds each job's share.
  Sampler sampler(
      a, {{"a", 0, 1}, {"b", 1, 1}}, [&](const v1::Sample& s) { samples.push_back(s); }, 1'000'000);
  Complete(a.job(0), kRead, {1000, 2000, 3000});
  Complete(a.job(1), kWrite, {700});
  sampler.Emit(2'000'000);
  sampler.Emit(3'000'000);  // nothing happened: an empty sample
  Complete(a.job(1), kRead, {90'000, 100});
  a.job(0).end_ns.store(4'500'000);
  a.job(1).end_ns.store(4'000'000);
  absl::StatusOr<v1::RunResult> r = BuildResult(a, 1'000'000, "io_uring");
  ASSERT_TRUE(r.ok()) << r.status();
  sampler.EmitFinal(r->duration_ns());

  ASSERT_EQ(samples.size(), 3u);
  H merged;
  uint64_t reads = 0, writes = 0, interval = 0;
  for (size_t i = 0; i < samples.size(); ++i) {
    EXPECT_EQ(samples[i].seq(), i + 1);
    interval += samples[i].interval_ns();
    EXPECT_EQ(samples[i].offset_ns(), interval);
    absl::StatusOr<H> h = H::FromProto(samples[i].lat());
    ASSERT_TRUE(h.ok()) << h.status();
    merged.Merge(*h);
    reads += samples[i].io().read_ios();
    writes += samples[i].io().write_ios();
  }
  EXPECT_EQ(samples[1].lat().count(), 0u);
  EXPECT_EQ(samples[2].offset_ns(), 3'500'000u);
  for (const v1::Sample& s : samples) {
    ASSERT_EQ(s.jobs_size(), 2);
    EXPECT_EQ(s.jobs(0).name(), "a");
    EXPECT_EQ(s.jobs(1).index(), 1u);
    EXPECT_EQ(s.jobs(0).io().read_ios() + s.jobs(1).io().read_ios(), s.io().read_ios());
    EXPECT_EQ(s.jobs(0).io().write_ios() + s.jobs(1).io().write_ios(), s.io().write_ios());
    for (const v1::JobInterval& j : s.jobs()) {
      ASSERT_TRUE(H::FromProto(j.read_lat()).ok());
      ASSERT_TRUE(H::FromProto(j.write_lat()).ok());
      EXPECT_EQ(j.read_lat().count(), j.io().read_ios());
      EXPECT_EQ(j.write_lat().count(), j.io().write_ios());
    }
  }
  EXPECT_EQ(samples[0].jobs(0).io().read_ios(), 3u);
  EXPECT_EQ(samples[0].jobs(0).read_lat().max_ns(), 3000u);
  EXPECT_EQ(samples[0].jobs(1).io().write_ios(), 1u);
  EXPECT_EQ(samples[0].jobs(1).write_lat().min_ns(), 700u);
  EXPECT_EQ(samples[2].jobs(1).io().read_ios(), 2u);
  EXPECT_EQ(samples[2].jobs(0).io().read_ios(), 0u);
  EXPECT_EQ(r->duration_ns(), 3'500'000u);
  EXPECT_EQ(reads, 5u);
  EXPECT_EQ(writes, 1u);
  EXPECT_EQ(r->io().read_ios(), 5u);
  EXPECT_EQ(r->io().write_bytes(), 4096u);
  v1::Histogram a_pb, b_pb;
  merged.ToProto(&a_pb);
  EXPECT_EQ(std::vector<uint32_t>(a_pb.bucket_index().begin(), a_pb.bucket_index().end()),
            std::vector<uint32_t>(r->lat().bucket_index().begin(), r->lat().bucket_index().end()));
  EXPECT_EQ(r->lat().count(), 6u);
  EXPECT_EQ(r->lat().min_ns(), 100u);
  EXPECT_EQ(r->lat().max_ns(), 90'000u);
  EXPECT_EQ(r->read_lat().count(), 5u);
  EXPECT_EQ(r->write_lat().max_ns(), 700u);
  EXPECT_DOUBLE_EQ(r->lat().sum_ns(), 96'800.0);
  EXPECT_DOUBLE_EQ(merged.mean_ns(), 96'800.0 / 6);
  EXPECT_NEAR(r->iops(), 6 / 3.5e-3, 1e-6);
  EXPECT_EQ(r->runner(), "io_uring");
}

}  // namespace
}  // namespace blkbench
