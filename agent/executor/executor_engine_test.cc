// The engine contract from the outside: a toy engine registered by this test runs through
// the one job loop (IoExecutor unchanged) with fio's batching, busy and error semantics;
// the built-in registry agrees with common/resolved_job.h's engine vocabulary.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "agent/executor/engine_registry.h"
#include "agent/executor/executor.h"
#include "agent/executor/executor_test_util.h"
#include "agent/executor/io_engine.h"
#include "common/resolved_job.h"
#include "common/testing/loop_device.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace blkbench {
namespace {

using exec_test::ExpectSamplesAddUp;
using exec_test::Internal;
using exec_test::Job;
using exec_test::kMiB;
using exec_test::Outcome;
using ::testing::HasSubstr;
using testing::TempFile;

// What the toy saw, for thread-mode jobs (process jobs have their own copy).
struct ToyCounters {
  std::atomic<int> inits{0}, cleanups{0};
  std::atomic<uint64_t> queued{0}, completed{0}, busy{0}, commits{0};
};
ToyCounters toy;
uint32_t toy_busy_every = 0;  // > 0: every n-th queue() with something in flight says busy
uint64_t toy_fail_offset = UINT64_MAX;

// An in-memory asynchronous engine: queue() parks the unit, commit() "submits" it,
// getevents() completes the oldest submitted ones, all without a system call.
class ToyEngine final : public IoEngine {
 public:
  bool Init(const EngineSetup& s) override {
    log_ = &s.log;
    depth_ = s.plan.job->iodepth;
    ring_ = static_cast<IoUnit**>(MapMemory(2 * depth_ * sizeof(IoUnit*), false, s.reporter));
    if (ring_ == nullptr) return false;
    toy.inits.fetch_add(1);
    return true;
  }
  QueueResult Queue(IoUnit& io) override {
    ++calls_;
    if (toy_busy_every != 0 && submitted_ > 0 && calls_ % toy_busy_every == 0) {
      toy.busy.fetch_add(1);
      return QueueResult::kBusy;
    }
    io.result = io.offset == toy_fail_offset ? int64_t{-EIO} : int64_t{io.len};
    ring_[(head_ + uncommitted_ + submitted_) % depth_] = &io;
    ++uncommitted_;
    toy.queued.fetch_add(1);
    return QueueResult::kQueued;
  }
  int Commit() override {
    log_->Committed(uncommitted_);
    submitted_ += uncommitted_;
    uncommitted_ = 0;
    toy.commits.fetch_add(1);
    return 0;
  }
  int GetEvents(uint32_t min, uint32_t max) override {
    if (uncommitted_ > 0) Commit();
    const uint32_t n = std::min(submitted_, max);
    if (n < min) return -EDEADLK;  // the loop asked for more than is in flight
    for (uint32_t i = 0; i < n; ++i) events_[i] = ring_[(head_ + i) % depth_];
    head_ = (head_ + n) % depth_;
    submitted_ -= n;
    toy.completed.fetch_add(n);
    return static_cast<int>(n);
  }
  IoUnit* Event(uint32_t i) override { return events_[i]; }
  void Cleanup() override {
    UnmapMemory(ring_, 2 * depth_ * sizeof(IoUnit*));
    toy.cleanups.fetch_add(1);
  }

 private:
  SubmitLog* log_ = nullptr;
  uint32_t depth_ = 0, head_ = 0, uncommitted_ = 0, submitted_ = 0;
  uint64_t calls_ = 0;
  IoUnit** ring_ = nullptr;
  IoUnit* events_[64] = {};  // this test's jobs run at iodepth <= 64
};

std::unique_ptr<IoEngine> NewToyEngine() { return std::make_unique<ToyEngine>(); }

class ToyEngineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<TempFile>> f = TempFile::Create(16 * kMiB);
    ASSERT_TRUE(f.ok()) << f.status();
    file_ = std::move(*f);
    ASSERT_TRUE(registry_.Register({"toy", 0, &NewToyEngine}).ok());
    toy_busy_every = 0;
    toy_fail_offset = UINT64_MAX;
    toy.inits = toy.cleanups = 0;
    toy.queued = toy.completed = toy.busy = toy.commits = 0;
  }
  Outcome Go(const v1::JobSpec& spec, uint32_t trace = 0) {
    Outcome run;
    ExecutorOptions opts;
    opts.engines = &registry_;
    opts.engine_override = "toy";
    opts.trace_ios_per_job = trace;
    opts.on_trace = [&run](uint32_t job, std::span<const IoTrace> ios) {
      run.traces[job].assign(ios.begin(), ios.end());
    };
    RunContext ctx;
    *ctx.cell.mutable_job() = spec;
    ctx.target_path = file_->path();
    ctx.target_size = file_->size();
    ctx.sample_interval = std::chrono::milliseconds(2);
    ctx.on_sample = [&run](const v1::Sample& s) { run.samples.push_back(s); };
    run.result = NewIoExecutor(std::move(opts))->Run(ctx);
    return run;
  }
  std::unique_ptr<TempFile> file_;
  EngineRegistry registry_;
};

TEST_F(ToyEngineTest, RunsThroughTheJobLoopWithFiosBatching) {
  v1::JobSpec j = Job(v1::RANDREAD, v1::IO_URING, /*thread=*/true);
  j.set_numjobs(2);
  j.set_iodepth(16);
  j.set_iodepth_batch_submit(4);
  j.set_iodepth_batch_complete_min(4);
  j.set_iodepth_batch_complete_max(8);
  j.set_io_size(4 * kMiB);  // 1024 I/Os per job
  Outcome run = Go(j);
  ASSERT_TRUE(run.result.ok()) << run.result.status();
  const v1::RunResult& r = *run.result;
  EXPECT_EQ(r.runner(), "toy");
  EXPECT_EQ(r.io().read_ios(), 2048u);
  EXPECT_EQ(Internal(r, "executor.submitted"), 2048);
  EXPECT_EQ(Internal(r, "executor.max_inflight"), 16);
  EXPECT_EQ(Internal(r, "executor.max_submit_batch"), 4);
  EXPECT_EQ(Internal(r, "executor.max_reap_batch"), 8);
  EXPECT_EQ(Internal(r, "executor.short_reaps"), 0);
  ExpectSamplesAddUp(run);
  // Balanced: init and cleanup once per job, everything queued was completed.
  EXPECT_EQ(toy.inits.load(), 2);
  EXPECT_EQ(toy.cleanups.load(), 2);
  EXPECT_EQ(toy.queued.load(), 2048u);
  EXPECT_EQ(toy.completed.load(), 2048u);
}

TEST_F(ToyEngineTest, ProcessJobsRunTheirOwnCopy) {
  v1::JobSpec j = Job(v1::RANDRW, v1::IO_URING, /*thread=*/false);
  j.set_numjobs(2);
  j.set_io_size(kMiB);
  Outcome run = Go(j);
  ASSERT_TRUE(run.result.ok()) << run.result.status();
  EXPECT_EQ(run.result->io().read_ios() + run.result->io().write_ios(), 512u);
  EXPECT_EQ(toy.inits.load(), 0);  // the parent's engines never ran
}

TEST_F(ToyEngineTest, BusyIsRetriedWithTheSameIo) {
  v1::JobSpec j = Job(v1::RANDREAD, v1::IO_URING, /*thread=*/true);
  j.set_iodepth(8);
  j.set_io_size(kMiB);
  Outcome plain = Go(j, 256);
  ASSERT_TRUE(plain.result.ok()) << plain.result.status();
  toy_busy_every = 3;
  Outcome busy = Go(j, 256);
  ASSERT_TRUE(busy.result.ok()) << busy.result.status();
  EXPECT_GT(toy.busy.load(), 10u);
  EXPECT_EQ(busy.result->io().read_ios(), 256u);  // io_size is not charged for a busy try
  ASSERT_EQ(busy.traces[0].size(), plain.traces[0].size());
  for (size_t i = 0; i < plain.traces[0].size(); ++i) {
    ASSERT_EQ(busy.traces[0][i].offset, plain.traces[0][i].offset) << i;
  }
}

TEST_F(ToyEngineTest, AFailedIoFailsTheRunWithItsOffset) {
  v1::JobSpec j = Job(v1::READ, v1::IO_URING, /*thread=*/true);
  j.set_iodepth(4);
  toy_fail_offset = 40960;
  Outcome run = Go(j);
  EXPECT_EQ(run.result.status().code(), absl::StatusCode::kInternal) << run.result.status();
  EXPECT_THAT(std::string(run.result.status().message()), HasSubstr("toy read at offset 40960"));
  EXPECT_EQ(toy.queued.load(), toy.completed.load());  // drained before cleanup
  EXPECT_EQ(toy.cleanups.load(), 1);
}

TEST_F(ToyEngineTest, AnOptionTheEngineLacksIsRefused) {
  v1::JobSpec j = Job(v1::READ, v1::IO_URING, /*thread=*/true);
  j.set_fixedbufs(true);  // fine for io_uring, which ResolveJob checked; the toy has no caps
  Outcome run = Go(j);
  EXPECT_EQ(run.result.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(run.result.status().message()), HasSubstr("fixedbufs"));
  EXPECT_EQ(toy.inits.load(), 0);
}

TEST(EngineRegistryTest, BuiltinsAreTheVocabulary) {
  const EngineRegistry& r = EngineRegistry::Builtin();
  for (const IoEngineInfo& e : IoEngines()) {
    const EngineType* t = r.Find(e.name);
    ASSERT_NE(t, nullptr) << e.name;
    EXPECT_EQ(t->caps, e.caps) << e.name;
    EXPECT_NE(t->make(), nullptr) << e.name;
  }
  std::vector<std::string> vocabulary;
  for (const IoEngineInfo& e : IoEngines()) vocabulary.emplace_back(e.name);
  EXPECT_THAT(r.Names(), ::testing::UnorderedElementsAreArray(vocabulary));
  EXPECT_EQ(r.Find("posixaio"), nullptr);
  EngineRegistry mine;
  ASSERT_TRUE(mine.Register({"toy", 0, &NewToyEngine}).ok());
  EXPECT_EQ(mine.Register({"toy", 0, &NewToyEngine}).code(), absl::StatusCode::kAlreadyExists);
}

TEST(EngineRegistryTest, AnUnknownOverrideIsRefusedBeforeAnyJob) {
  ExecutorOptions opts;
  opts.engine_override = "posixaio";
  RunContext ctx;
  *ctx.cell.mutable_job() = Job(v1::READ, v1::PSYNC, true);
  ctx.target_path = "/dev/null";
  ctx.target_size = kMiB;
  absl::StatusOr<v1::RunResult> r = NewIoExecutor(std::move(opts))->Run(ctx);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("posixaio"));
}

}  // namespace
}  // namespace blkbench
