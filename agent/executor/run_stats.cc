// Interval samples and the final RunResult from the jobs' shared stats (run_stats.h).
#include "agent/executor/run_stats.h"

#include <algorithm>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace blkbench {
namespace {

constexpr auto kRelaxed = std::memory_order_relaxed;
using H = LatencyHistogram;

void FillIo(const Totals& prev, const Totals& cur, v1::IoCounters* io) {
  io->set_read_ios(cur.ios[kRead] - prev.ios[kRead]);
  io->set_write_ios(cur.ios[kWrite] - prev.ios[kWrite]);
  io->set_read_bytes(cur.bytes[kRead] - prev.bytes[kRead]);
  io->set_write_bytes(cur.bytes[kWrite] - prev.bytes[kWrite]);
}

absl::StatusOr<H> JobHistogram(const JobShared& j, int dir) {
  std::array<uint64_t, H::kBuckets> dense;
  for (int i = 0; i < H::kBuckets; ++i) dense[i] = j.buckets[dir][i].load(kRelaxed);
  const uint64_t n = j.ios[dir].load(kRelaxed);
  return H::FromBuckets(dense, n ? j.lat_min_ns[dir].load(kRelaxed) : 0,
                        n ? j.lat_max_ns[dir].load(kRelaxed) : 0,
                        static_cast<double>(j.lat_sum_ns[dir].load(kRelaxed)));
}

}  // namespace

void ReadTotals(const SharedArea& area, Totals* out) {
  *out = Totals();
  for (uint32_t j = 0; j < area.num_jobs(); ++j) {
    const JobShared& s = area.job(j);
    for (int d = 0; d < 2; ++d) {
      out->ios[d] += s.ios[d].load(kRelaxed);
      out->bytes[d] += s.bytes[d].load(kRelaxed);
      out->sum_ns += s.lat_sum_ns[d].load(kRelaxed);
      out->min_ns = std::min(out->min_ns, s.lat_min_ns[d].load(kRelaxed));
      out->max_ns = std::max(out->max_ns, s.lat_max_ns[d].load(kRelaxed));
      for (int i = 0; i < H::kBuckets; ++i) out->buckets[i] += s.buckets[d][i].load(kRelaxed);
    }
  }
}

void ReadSliceTotals(const SharedArea& area, const JobSlice& slice, int dir, Totals* out) {
  *out = Totals();
  for (uint32_t j = slice.first; j < slice.first + slice.threads && j < area.num_jobs(); ++j) {
    const JobShared& s = area.job(j);
    out->ios[dir] += s.ios[dir].load(kRelaxed);
    out->bytes[dir] += s.bytes[dir].load(kRelaxed);
    out->sum_ns += s.lat_sum_ns[dir].load(kRelaxed);
    out->min_ns = std::min(out->min_ns, s.lat_min_ns[dir].load(kRelaxed));
    out->max_ns = std::max(out->max_ns, s.lat_max_ns[dir].load(kRelaxed));
    for (int i = 0; i < H::kBuckets; ++i) out->buckets[i] += s.buckets[dir][i].load(kRelaxed);
  }
}

void IntervalHistogram(const Totals& prev, const Totals& cur, v1::Histogram* out) {
  out->Clear();
  uint64_t count = 0;
  uint32_t first = 0, last = 0;
  for (uint32_t i = 0; i < static_cast<uint32_t>(H::kBuckets); ++i) {
    const uint64_t d = cur.buckets[i] - prev.buckets[i];
    if (d == 0) continue;
    if (count == 0) first = i;
    last = i;
    count += d;
    out->add_bucket_index(i);
    out->add_bucket_count(d);
  }
  out->set_count(count);
  if (count == 0) return;
  uint64_t min = H::BucketLowerBound(first);
  if (cur.min_ns < prev.min_ns && H::BucketIndex(cur.min_ns) == first) min = cur.min_ns;
  // The last bucket is open-ended: the running max is the only sensible upper value.
  uint64_t max = last + 1 == static_cast<uint32_t>(H::kBuckets)
                     ? std::max(cur.max_ns, H::BucketLowerBound(last))
                     : H::BucketUpperBound(last);
  if (cur.max_ns > prev.max_ns && H::BucketIndex(cur.max_ns) == last) max = cur.max_ns;
  double lo = 0, hi = 0;
  for (int k = 0; k < out->bucket_index_size(); ++k) {
    const uint32_t i = out->bucket_index(k);
    const double n = static_cast<double>(out->bucket_count(k));
    lo += n * static_cast<double>(i == first ? min : H::BucketLowerBound(i));
    hi += n * static_cast<double>(i == last ? max : H::BucketUpperBound(i));
  }
  const double sum = static_cast<double>(cur.sum_ns - prev.sum_ns);
  out->set_min_ns(min);
  out->set_max_ns(max);
  out->set_sum_ns(std::clamp(sum, lo, hi));
}

Sampler::Sampler(const SharedArea& area, std::vector<JobSlice> slices,
                 std::function<void(const v1::Sample&)> on_sample, uint64_t measure_start_ns)
    : area_(area),
      slices_(std::move(slices)),
      on_sample_(std::move(on_sample)),
      measure_start_ns_(measure_start_ns),
      prev_jobs_(2 * slices_.size()),
      cur_jobs_(2 * slices_.size()) {}

void Sampler::ReadAll() {
  ReadTotals(area_, &cur_);
  for (size_t k = 0; k < slices_.size(); ++k) {
    for (int d = 0; d < 2; ++d) ReadSliceTotals(area_, slices_[k], d, &cur_jobs_[2 * k + d]);
  }
}

void Sampler::Emit(uint64_t now_ns) {
  uint64_t offset = now_ns > measure_start_ns_ ? now_ns - measure_start_ns_ : 0;
  // If every job had finished its I/O (end_ns is published after its last stats) before
  // the totals are read, this sample holds the last I/O: end it where the run ended,
  // so that samples tile [0, duration] exactly.
  bool all_ended = true;
  uint64_t end_ns = measure_start_ns_;
  for (uint32_t j = 0; j < area_.num_jobs() && all_ended; ++j) {
    const uint64_t e = area_.job(j).end_ns.load(std::memory_order_acquire);
    all_ended = e != 0;
    end_ns = std::max(end_ns, e);
  }
  if (all_ended) offset = std::min(offset, end_ns - measure_start_ns_);
  ReadAll();
  EmitAt(std::max(offset, prev_offset_ns_));
}

void Sampler::EmitFinal(uint64_t duration_ns) {
  ReadAll();
  const uint64_t offset = std::max(duration_ns, prev_offset_ns_);
  bool any = offset > prev_offset_ns_;
  for (int d = 0; d < 2; ++d) any |= cur_.ios[d] != prev_.ios[d];
  for (int i = 0; i < H::kBuckets && !any; ++i) any = cur_.buckets[i] != prev_.buckets[i];
  if (any) EmitAt(offset);
}

void Sampler::EmitAt(uint64_t offset_ns) {
  v1::Sample s;
  s.set_seq(++seq_);
  s.set_offset_ns(offset_ns);
  s.set_interval_ns(offset_ns - prev_offset_ns_);
  FillIo(prev_, cur_, s.mutable_io());
  IntervalHistogram(prev_, cur_, s.mutable_lat());
  for (size_t k = 0; k < slices_.size(); ++k) {
    const Totals& prev_read = prev_jobs_[2 * k + kRead];
    const Totals& cur_read = cur_jobs_[2 * k + kRead];
    const Totals& prev_write = prev_jobs_[2 * k + kWrite];
    const Totals& cur_write = cur_jobs_[2 * k + kWrite];
    v1::JobInterval& job = *s.add_jobs();
    job.set_index(static_cast<uint32_t>(k));
    job.set_name(slices_[k].name);
    job.mutable_io()->set_read_ios(cur_read.ios[kRead] - prev_read.ios[kRead]);
    job.mutable_io()->set_read_bytes(cur_read.bytes[kRead] - prev_read.bytes[kRead]);
    job.mutable_io()->set_write_ios(cur_write.ios[kWrite] - prev_write.ios[kWrite]);
    job.mutable_io()->set_write_bytes(cur_write.bytes[kWrite] - prev_write.bytes[kWrite]);
    IntervalHistogram(prev_read, cur_read, job.mutable_read_lat());
    IntervalHistogram(prev_write, cur_write, job.mutable_write_lat());
  }
  prev_offset_ns_ = offset_ns;
  std::swap(prev_, cur_);
  std::swap(prev_jobs_, cur_jobs_);
  if (on_sample_) on_sample_(s);
}

namespace {
// Thread `j`'s read and write latency histograms merged into `dir_lat` and both into `lat`.
absl::Status MergeJobLatency(const JobShared& s, uint32_t j, H& lat, H (&dir_lat)[2]) {
  for (int d = 0; d < 2; ++d) {
    absl::StatusOr<H> h = JobHistogram(s, d);
    if (!h.ok()) {
      return absl::InternalError(absl::StrCat("job ", j, " stats: ", h.status().message()));
    }
    dir_lat[d].Merge(*h);
    lat.Merge(*h);
  }
  return absl::OkStatus();
}
}  // namespace

absl::Status AddJobResults(const SharedArea& area, const std::vector<JobSlice>& slices,
                           v1::RunResult& r) {
  const double secs = static_cast<double>(r.duration_ns()) / 1e9;
  for (const JobSlice& slice : slices) {
    v1::JobResult& out = *r.add_jobs();
    out.set_name(slice.name);
    H lat, dir_lat[2];
    uint64_t ios[2] = {0, 0}, bytes[2] = {0, 0};
    for (uint32_t j = slice.first; j < slice.first + slice.threads && j < area.num_jobs(); ++j) {
      const JobShared& s = area.job(j);
      if (absl::Status st = MergeJobLatency(s, j, lat, dir_lat); !st.ok()) return st;
      for (int d = 0; d < 2; ++d) {
        ios[d] += s.ios[d].load(kRelaxed);
        bytes[d] += s.bytes[d].load(kRelaxed);
      }
    }
    out.mutable_io()->set_read_ios(ios[kRead]);
    out.mutable_io()->set_write_ios(ios[kWrite]);
    out.mutable_io()->set_read_bytes(bytes[kRead]);
    out.mutable_io()->set_write_bytes(bytes[kWrite]);
    if (secs > 0) {
      out.set_iops(static_cast<double>(ios[kRead] + ios[kWrite]) / secs);
      out.set_bw_bytes_per_sec(static_cast<double>(bytes[kRead] + bytes[kWrite]) / secs);
    }
    lat.ToProto(out.mutable_lat());
    dir_lat[kRead].ToProto(out.mutable_read_lat());
    dir_lat[kWrite].ToProto(out.mutable_write_lat());
    *out.mutable_lat_summary() = lat.Summary();
  }
  return absl::OkStatus();
}

void SetDuration(v1::RunResult& r, uint64_t duration_ns) {
  r.set_duration_ns(duration_ns);
  if (duration_ns == 0) return;
  const double secs = static_cast<double>(duration_ns) / 1e9;
  r.set_iops(static_cast<double>(r.io().read_ios() + r.io().write_ios()) / secs);
  r.set_bw_bytes_per_sec(static_cast<double>(r.io().read_bytes() + r.io().write_bytes()) / secs);
}

absl::StatusOr<v1::RunResult> BuildResult(const SharedArea& area, uint64_t measure_start_ns,
                                          const std::string& runner) {
  v1::RunResult r;
  H lat, dir_lat[2];
  uint64_t end_ns = measure_start_ns, usr = 0, sys = 0;
  uint64_t max_inflight = 0, submit_calls = 0, submitted = 0, max_submit = 0, reap_calls = 0,
           max_reap = 0, short_reaps = 0, fsyncs = 0;
  Totals t;
  ReadTotals(area, &t);
  for (uint32_t j = 0; j < area.num_jobs(); ++j) {
    const JobShared& s = area.job(j);
    if (absl::Status st = MergeJobLatency(s, j, lat, dir_lat); !st.ok()) return st;
    end_ns = std::max(end_ns, s.end_ns.load(kRelaxed));
    usr += s.usr_ns.load(kRelaxed);
    sys += s.sys_ns.load(kRelaxed);
    max_inflight = std::max(max_inflight, s.max_inflight.load(kRelaxed));
    submit_calls += s.submit_calls.load(kRelaxed);
    submitted += s.submitted.load(kRelaxed);
    max_submit = std::max(max_submit, s.max_submit_batch.load(kRelaxed));
    reap_calls += s.reap_calls.load(kRelaxed);
    max_reap = std::max(max_reap, s.max_reap_batch.load(kRelaxed));
    short_reaps += s.short_reaps.load(kRelaxed);
    fsyncs += s.fsyncs.load(kRelaxed);
  }
  FillIo(Totals(), t, r.mutable_io());
  SetDuration(r, end_ns - measure_start_ns);
  lat.ToProto(r.mutable_lat());
  dir_lat[kRead].ToProto(r.mutable_read_lat());
  dir_lat[kWrite].ToProto(r.mutable_write_lat());
  *r.mutable_lat_summary() = lat.Summary();
  r.set_usr_cpu_ns(usr);
  r.set_sys_cpu_ns(sys);
  r.set_runner(runner);
  auto& in = *r.mutable_internals();
  in["executor.max_inflight"] = static_cast<double>(max_inflight);
  in["executor.submit_calls"] = static_cast<double>(submit_calls);
  in["executor.submitted"] = static_cast<double>(submitted);
  in["executor.max_submit_batch"] = static_cast<double>(max_submit);
  in["executor.reap_calls"] = static_cast<double>(reap_calls);
  in["executor.max_reap_batch"] = static_cast<double>(max_reap);
  in["executor.short_reaps"] = static_cast<double>(short_reaps);
  if (fsyncs > 0) in["executor.fsyncs"] = static_cast<double>(fsyncs);
  if (area.num_jobs() > 0) {
    in["executor.ring_flags"] = static_cast<double>(area.job(0).ring_flags.load(kRelaxed));
  }
  return r;
}

}  // namespace blkbench
