// IoExecutor against a real file in /dev/shm: counts, regions, written data, wrap-around,
// queue depth and batching, registered resources, runtime/ramp/CPU, cancel, errors — the
// engine-agnostic ones on every built-in engine (the data checks on every engine but nop),
// batching on every asynchronous one.
#include "agent/executor/executor.h"

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "agent/executor/executor_test_util.h"
#include "common/testing/loop_device.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace blkbench {
namespace {

using exec_test::AllEngines;
using exec_test::AsyncEngines;
using exec_test::DataEngines;
using exec_test::EngineName;
using exec_test::Execute;
using exec_test::ExpectCancelStopsPromptly;
using exec_test::ExpectSamplesAddUp;
using exec_test::ForEachEngine;
using exec_test::Internal;
using exec_test::IsSyncEngine;
using exec_test::Job;
using exec_test::kMiB;
using exec_test::kMs;
using exec_test::ModeName;
using exec_test::Outcome;
using ::testing::HasSubstr;
using testing::TempFile;

class FileTest : public ::testing::TestWithParam<bool /*thread*/> {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<TempFile>> f = TempFile::Create(64 * kMiB);
    ASSERT_TRUE(f.ok()) << f.status();
    file_ = std::move(*f);
  }
  Outcome Go(const v1::JobSpec& j, uint32_t trace = 0,
             std::chrono::nanoseconds interval = std::chrono::seconds(1)) {
    return Execute(file_->path(), file_->size(), j, trace, interval);
  }
  void QueueDepthAndBatchSemanticsOn(v1::IoEngine engine);
  std::unique_ptr<TempFile> file_;
};

INSTANTIATE_TEST_SUITE_P(Modes, FileTest, ::testing::Values(true, false), ModeName);

TEST_P(FileTest, SequentialReadCountsBytesAndSamples) {
  ForEachEngine(AllEngines(), v1::READ, GetParam(), [&](v1::IoEngine engine, v1::JobSpec j) {
    j.set_size(8 * kMiB);
    Outcome run = Go(j, 0, std::chrono::milliseconds(5));
    ASSERT_TRUE(run.result.ok()) << run.result.status();
    const v1::RunResult& r = *run.result;
    EXPECT_EQ(r.runner(), EngineName(engine));
    EXPECT_EQ(r.io().read_ios(), 2048u);
    EXPECT_EQ(r.io().read_bytes(), 8 * kMiB);
    EXPECT_EQ(r.io().write_ios(), 0u);
    EXPECT_EQ(r.lat().count(), 2048u);
    EXPECT_EQ(r.read_lat().count(), 2048u);
    EXPECT_EQ(r.write_lat().count(), 0u);
    EXPECT_GT(r.duration_ns(), 0u);
    EXPECT_NEAR(r.iops(), 2048 / (r.duration_ns() / 1e9), 1e-6 * r.iops());
    EXPECT_GT(r.lat_summary().min_ns(), 0u);
    EXPECT_LE(r.lat_summary().p50_ns(), r.lat_summary().max_ns());
    EXPECT_LE(Internal(r, "executor.max_inflight"), IsSyncEngine(engine) ? 1 : 8);
    ExpectSamplesAddUp(run);
  });
}

TEST_P(FileTest, RandomOffsetsStayInsideEachJobsRegionAndAreDeterministic) {
  v1::JobSpec j = Job(v1::RANDRW, v1::IO_URING, GetParam());
  j.set_numjobs(3);
  j.set_offset(kMiB);
  j.set_offset_increment(8 * kMiB);
  j.set_size(4 * kMiB);
  j.set_io_size(kMiB);  // 256 I/Os per job
  j.set_rwmixread(60);
  j.set_iodepth(4);
  Outcome run = Go(j, 1000);
  ASSERT_TRUE(run.result.ok()) << run.result.status();
  uint64_t reads = 0, writes = 0;
  ASSERT_EQ(run.traces.size(), 3u);
  for (const auto& [job, ios] : run.traces) {
    const uint64_t start = kMiB + job * 8 * kMiB;
    ASSERT_EQ(ios.size(), 256u) << job;
    uint64_t job_writes = 0;
    for (const IoTrace& io : ios) {
      ASSERT_GE(io.offset, start);
      ASSERT_LE(io.offset + io.len, start + 4 * kMiB);
      ASSERT_EQ((io.offset - start) % 4096, 0u);
      ASSERT_EQ(io.len, 4096u);
      job_writes += io.write;
    }
    EXPECT_GT(job_writes, 256u * 25 / 100) << job;  // 40 % writes expected
    EXPECT_LT(job_writes, 256u * 55 / 100) << job;
    writes += job_writes;
    reads += ios.size() - job_writes;
  }
  EXPECT_EQ(run.result->io().read_ios(), reads);
  EXPECT_EQ(run.result->io().write_ios(), writes);

  Outcome again = Go(j, 1000);
  ASSERT_TRUE(again.result.ok());
  for (uint32_t job = 0; job < 3; ++job) {
    ASSERT_EQ(again.traces[job].size(), run.traces[job].size());
    for (size_t i = 0; i < run.traces[job].size(); ++i) {
      ASSERT_EQ(again.traces[job][i].offset, run.traces[job][i].offset);
      ASSERT_EQ(again.traces[job][i].write, run.traces[job][i].write);
    }
  }
}

TEST_P(FileTest, WritesLandOnlyInsideTheRegion) {
  ForEachEngine(DataEngines(), v1::RANDWRITE, GetParam(),
                [&](v1::IoEngine /*engine*/, v1::JobSpec j) {
                  SetUp();  // a fresh zero file per engine
                  j.set_offset(4 * kMiB);
                  j.set_size(2 * kMiB);
                  Outcome run = Go(j);
                  ASSERT_TRUE(run.result.ok()) << run.result.status();
                  EXPECT_EQ(run.result->io().write_bytes(), 2 * kMiB);
                  absl::StatusOr<std::string> data = file_->Contents();
                  ASSERT_TRUE(data.ok());
                  uint64_t written_blocks = 0;
                  for (uint64_t off = 0; off < data->size(); off += 4096) {
                    const bool nonzero = data->compare(off, 4096, std::string(4096, '\0')) != 0;
                    if (off < 4 * kMiB || off >= 6 * kMiB) {
                      ASSERT_FALSE(nonzero) << "write outside the region at " << off;
                    }
                    written_blocks += nonzero;
                  }
                  // 512 random writes with replacement into 512 blocks hit ~63 % of them.
                  EXPECT_GT(written_blocks, 250u);
                });
}

TEST_P(FileTest, SequentialWrapsAroundTheRegion) {
  ForEachEngine(AllEngines(), v1::READ, GetParam(), [&](v1::IoEngine /*engine*/, v1::JobSpec j) {
    j.set_offset(kMiB);
    j.set_size(64 * 1024);  // 16 blocks
    j.set_io_size(40 * 4096);
    Outcome run = Go(j, 100);
    ASSERT_TRUE(run.result.ok()) << run.result.status();
    ASSERT_EQ(run.traces[0].size(), 40u);
    for (size_t i = 0; i < 40; ++i) EXPECT_EQ(run.traces[0][i].offset, kMiB + (i % 16) * 4096);
  });
}

TEST_P(FileTest, QueueDepthAndBatchSemantics) {
  for (v1::IoEngine engine : AsyncEngines()) {
    SCOPED_TRACE(EngineName(engine));
    QueueDepthAndBatchSemanticsOn(engine);
  }
}

void FileTest::QueueDepthAndBatchSemanticsOn(v1::IoEngine engine) {
  v1::JobSpec j = Job(v1::RANDREAD, engine, GetParam());
  j.set_iodepth(16);
  j.set_iodepth_batch_submit(4);
  j.set_iodepth_batch_complete_min(4);
  j.set_iodepth_batch_complete_max(4);
  j.set_io_size(16 * kMiB);
  Outcome run = Go(j);
  ASSERT_TRUE(run.result.ok()) << run.result.status();
  const v1::RunResult& r = *run.result;
  EXPECT_EQ(r.io().read_ios(), 4096u);
  EXPECT_EQ(Internal(r, "executor.max_inflight"), 16);
  EXPECT_EQ(Internal(r, "executor.max_submit_batch"), 4);
  EXPECT_EQ(Internal(r, "executor.max_reap_batch"), 4);
  EXPECT_EQ(Internal(r, "executor.short_reaps"), 0);
  EXPECT_EQ(Internal(r, "executor.submitted"), 4096);
  EXPECT_GE(4096 / Internal(r, "executor.submit_calls"), 3.9);
  EXPECT_GE(4096 / Internal(r, "executor.reap_calls"), 3.9);

  j.set_iodepth_batch_complete_min(1);
  j.set_iodepth_batch_complete_max(1);  // fio's default: reap one at a time
  run = Go(j);
  ASSERT_TRUE(run.result.ok()) << run.result.status();
  EXPECT_EQ(Internal(*run.result, "executor.max_reap_batch"), 1);
  EXPECT_EQ(Internal(*run.result, "executor.reap_calls"), 4096);

  j.set_iodepth_batch_complete_min(0);  // fio: poll for completions, never sleep
  j.set_iodepth_batch_complete_max(8);
  run = Go(j);
  ASSERT_TRUE(run.result.ok()) << run.result.status();
  EXPECT_EQ(run.result->io().read_ios(), 4096u);
  EXPECT_LE(Internal(*run.result, "executor.max_reap_batch"), 8);
}

TEST_P(FileTest, RegisteredFilesFixedBuffersAndSqpoll) {
  v1::JobSpec j = Job(v1::RANDRW, v1::IO_URING, GetParam());
  j.set_iodepth(8);
  j.set_io_size(4 * kMiB);
  j.set_fixedbufs(true);
  j.set_registerfiles(true);
  Outcome run = Go(j);
  ASSERT_TRUE(run.result.ok()) << run.result.status();
  EXPECT_EQ(run.result->io().read_ios() + run.result->io().write_ios(), 1024u);
  j.set_sqthread_poll(true);
  run = Go(j);
  ASSERT_TRUE(run.result.ok()) << run.result.status();
  EXPECT_EQ(run.result->io().read_ios() + run.result->io().write_ios(), 1024u);
  const uint64_t flags = static_cast<uint64_t>(Internal(*run.result, "executor.ring_flags"));
  EXPECT_NE(flags & 2 /* IORING_SETUP_SQPOLL */, 0u);
}

TEST_P(FileTest, TimeBasedRuntimeRampAndCpu) {
  v1::JobSpec j = Job(v1::RANDREAD, v1::IO_URING, GetParam());
  j.set_numjobs(2);
  j.set_time_based(true);
  j.set_runtime_ns(300 * kMs);
  j.set_ramp_time_ns(200 * kMs);
  j.set_cpus_allowed("0");
  Outcome run = Go(j, 0, std::chrono::milliseconds(50));
  ASSERT_TRUE(run.result.ok()) << run.result.status();
  const v1::RunResult& r = *run.result;
  EXPECT_GE(r.duration_ns(), 300 * kMs);
  EXPECT_LT(r.duration_ns(), 400 * kMs);
  EXPECT_GE(run.wall, std::chrono::milliseconds(500));  // ramp + runtime
  EXPECT_GT(r.io().read_ios(), 1000u);
  EXPECT_GT(r.usr_cpu_ns() + r.sys_cpu_ns(), 0u);
  ASSERT_GE(run.samples.size(), 5u);
  EXPECT_GE(run.samples[0].offset_ns(), 50 * kMs);  // no sample during the ramp
  ExpectSamplesAddUp(run);
}

TEST_P(FileTest, RampIoIsNotCounted) {
  ForEachEngine(
      AllEngines(), v1::RANDREAD, GetParam(), [&](v1::IoEngine /*engine*/, v1::JobSpec j) {
        j.set_ramp_time_ns(50 * kMs);
        j.set_io_size(4 * kMiB);
        Outcome run = Go(j, 4096);
        ASSERT_TRUE(run.result.ok()) << run.result.status();
        EXPECT_EQ(run.result->io().read_ios(), 1024u);  // io_size counts after the ramp only
        EXPECT_GT(run.traces[0].size(), 1024u);         // but I/O did run during the ramp
      });
}

TEST_P(FileTest, CancelStopsPromptly) {
  ForEachEngine(AllEngines(), v1::RANDREAD, GetParam(),
                [&](v1::IoEngine /*engine*/, v1::JobSpec j) {
                  j.set_numjobs(2);
                  ExpectCancelStopsPromptly(file_->path(), file_->size(), j);
                });
}

TEST_P(FileTest, SetupErrorsNameTheCause) {
  v1::JobSpec j = Job(v1::RANDREAD, v1::IO_URING, GetParam());
  j.set_numjobs(2);
  Outcome run = Execute("/dev/shm/blkbench-no-such-file", 64 * kMiB, j);
  EXPECT_EQ(run.result.status().code(), absl::StatusCode::kInternal);
  EXPECT_THAT(std::string(run.result.status().message()), HasSubstr("open("));
  // Polled I/O on tmpfs: a clear error naming hipri and the errno, not a hang.
  j.set_direct(true);
  j.set_hipri(true);
  run = Go(j);
  EXPECT_EQ(run.result.status().code(), absl::StatusCode::kInvalidArgument) << run.result.status();
  EXPECT_THAT(std::string(run.result.status().message()), HasSubstr("hipri"));
  EXPECT_THAT(std::string(run.result.status().message()), HasSubstr("errno"));
}

TEST_P(FileTest, ShortReadFailsTheRunWithItsOffset) {
  absl::StatusOr<std::unique_ptr<TempFile>> small = TempFile::Create(kMiB);
  ASSERT_TRUE(small.ok());
  ForEachEngine(DataEngines(), v1::READ, GetParam(), [&](v1::IoEngine /*engine*/, v1::JobSpec j) {
    j.set_iodepth(4);
    // The caller claims 8 MiB; reads past the real 1 MiB end come back short (EOF).
    Outcome run = Execute((*small)->path(), 8 * kMiB, j);
    EXPECT_EQ(run.result.status().code(), absl::StatusCode::kInternal) << run.result.status();
    EXPECT_THAT(std::string(run.result.status().message()), HasSubstr("short"));
    EXPECT_THAT(std::string(run.result.status().message()), HasSubstr("offset 1048576"));
  });
}

}  // namespace
}  // namespace blkbench
