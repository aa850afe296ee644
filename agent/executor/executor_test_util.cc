// Shared helpers for the IoExecutor integration tests (executor_test_util.h).
#include "agent/executor/executor_test_util.h"

#include <utility>

#include "common/histogram.h"
#include "common/resolved_job.h"

namespace blkbench::exec_test {
namespace {

using H = LatencyHistogram;

std::vector<std::pair<uint32_t, uint64_t>> Buckets(const v1::Histogram& h) {
  std::vector<std::pair<uint32_t, uint64_t>> v;
  for (int i = 0; i < h.bucket_index_size(); ++i) {
    v.emplace_back(h.bucket_index(i), h.bucket_count(i));
  }
  return v;
}

}  // namespace

v1::JobSpec Job(v1::RwMode rw, v1::IoEngine engine, bool thread) {
  v1::JobSpec j;
  j.set_rw(rw);
  j.set_ioengine(engine);
  j.set_bs(4096);
  j.set_iodepth(8);
  j.set_numjobs(1);
  j.set_iodepth_batch_submit(1);
  j.set_iodepth_batch_complete_min(1);
  j.set_rwmixread(50);
  j.set_randseed(0x89);
  j.set_thread(thread);
  return j;
}

Outcome Execute(const std::string& path, uint64_t size, const v1::JobSpec& spec,
                uint32_t trace_per_job, std::chrono::nanoseconds interval,
                std::atomic<bool>* cancel, bool cancel_on_first_sample) {
  Outcome run;
  ExecutorOptions opts;
  opts.trace_ios_per_job = trace_per_job;
  opts.on_trace = [&run](uint32_t job, std::span<const IoTrace> ios) {
    run.traces[job].assign(ios.begin(), ios.end());
  };
  RunContext ctx;
  *ctx.cell.mutable_job() = spec;
  ctx.target_path = path;
  ctx.target_size = size;
  ctx.sample_interval = interval;
  ctx.cancel = cancel;
  ctx.on_sample = [&](const v1::Sample& s) {
    run.samples.push_back(s);
    if (cancel_on_first_sample) cancel->store(true);
  };
  const auto t0 = std::chrono::steady_clock::now();
  run.result = NewIoExecutor(std::move(opts))->Run(ctx);
  run.wall = std::chrono::steady_clock::now() - t0;
  return run;
}

void ExpectSamplesAddUp(const Outcome& run) {
  ASSERT_TRUE(run.result.ok());
  const v1::RunResult& r = *run.result;
  ASSERT_FALSE(run.samples.empty());
  H merged;
  v1::IoCounters io;
  uint64_t elapsed = 0;
  for (size_t i = 0; i < run.samples.size(); ++i) {
    const v1::Sample& s = run.samples[i];
    EXPECT_EQ(s.seq(), i + 1);
    elapsed += s.interval_ns();
    EXPECT_EQ(s.offset_ns(), elapsed);
    absl::StatusOr<H> h = H::FromProto(s.lat());
    ASSERT_TRUE(h.ok()) << "sample " << s.seq() << ": " << h.status();
    merged.Merge(*h);
    io.set_read_ios(io.read_ios() + s.io().read_ios());
    io.set_write_ios(io.write_ios() + s.io().write_ios());
    io.set_read_bytes(io.read_bytes() + s.io().read_bytes());
    io.set_write_bytes(io.write_bytes() + s.io().write_bytes());
  }
  EXPECT_EQ(elapsed, r.duration_ns());
  EXPECT_EQ(io.SerializeAsString(), r.io().SerializeAsString());
  v1::Histogram m;
  merged.ToProto(&m);
  EXPECT_EQ(Buckets(m), Buckets(r.lat()));
  EXPECT_EQ(m.count(), r.lat().count());
  EXPECT_NEAR(m.sum_ns(), r.lat().sum_ns(), r.lat().sum_ns() / 128 + 1);
}

double Internal(const v1::RunResult& r, const char* key) {
  auto it = r.internals().find(key);
  return it == r.internals().end() ? -1 : it->second;
}

std::string ModeName(const ::testing::TestParamInfo<bool>& p) {
  return p.param ? "threads" : "processes";
}

std::vector<v1::IoEngine> AllEngines() {
  std::vector<v1::IoEngine> v;
  for (const IoEngineInfo& e : IoEngines()) v.push_back(e.proto);
  return v;
}

std::vector<v1::IoEngine> DataEngines() {
  std::vector<v1::IoEngine> v;
  for (v1::IoEngine e : AllEngines()) {
    if ((FindIoEngine(e)->caps & kEngineNoIo) == 0) v.push_back(e);
  }
  return v;
}

std::vector<v1::IoEngine> AsyncEngines() {
  std::vector<v1::IoEngine> v;
  for (v1::IoEngine e : AllEngines()) {
    if (!IsSyncEngine(e)) v.push_back(e);
  }
  return v;
}

std::vector<v1::IoEngine> SyncEngines() {
  std::vector<v1::IoEngine> v;
  for (v1::IoEngine e : AllEngines()) {
    if (IsSyncEngine(e)) v.push_back(e);
  }
  return v;
}

void ForEachEngine(const std::vector<v1::IoEngine>& engines, v1::RwMode rw, bool thread,
                   absl::FunctionRef<void(v1::IoEngine, v1::JobSpec)> body) {
  for (v1::IoEngine engine : engines) {
    SCOPED_TRACE(EngineName(engine));
    body(engine, Job(rw, engine, thread));
  }
}

void ExpectCancelStopsPromptly(const std::string& path, uint64_t size, v1::JobSpec spec) {
  spec.set_time_based(true);
  spec.set_runtime_ns(60'000 * kMs);
  std::atomic<bool> cancel{false};
  Outcome run = Execute(path, size, spec, 0, std::chrono::milliseconds(20), &cancel,
                        /*cancel_on_first_sample=*/true);
  EXPECT_EQ(run.result.status().code(), absl::StatusCode::kCancelled) << run.result.status();
  EXPECT_LT(run.wall, std::chrono::seconds(3));
  EXPECT_EQ(run.samples.size(), 1u);
}

std::string EngineName(v1::IoEngine e) { return std::string(FindIoEngine(e)->name); }

bool IsSyncEngine(v1::IoEngine e) { return (FindIoEngine(e)->caps & kEngineSync) != 0; }

}  // namespace blkbench::exec_test
