// `trace: 1` on real runs: RunExecutor → RealDevicePreparation → BlockTrace on a real loop
// device, with the io_uring executor doing the I/O. The summary lands in
// RunResult.internals under the engine's names; without `trace:` no tracefs instance is
// made; a failed or cancelled run still removes its instance and journal entry.
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "agent/run_executor.h"
#include "agent/runners.h"
#include "common/testing/loop_device.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace blkbench {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using testing::LoopDevice;
using testing::TempDir;

constexpr char kTracefs[] = "/sys/kernel/tracing";
constexpr uint64_t kBs = 4096;
constexpr uint64_t kIoSize = 1 << 20;     // per run: 256 requests of 4 KiB
constexpr uint64_t kDeviceMiB = 16;       // 4096 blocks of 4 KiB
constexpr uint64_t kIos = kIoSize / kBs;  // 256
constexpr uint64_t kBlocks = (kDeviceMiB << 20) / kBs;

v1::RunAssignment Assignment(const std::string& path, v1::RwMode rw, uint32_t trace) {
  v1::RunAssignment a;
  a.set_run_id(7);
  a.set_attempt(1);
  a.set_lease_id("L1");
  a.set_device_path(path);
  a.set_sample_interval_ms(50);
  v1::CellSpec* cell = a.mutable_cell();
  cell->set_trace(trace);
  v1::JobSpec* job = cell->mutable_job();
  job->set_rw(rw);
  job->set_bs(kBs);
  job->set_iodepth(1);  // one request at a time: the dispatch order is the job's order
  job->set_numjobs(1);
  job->set_iodepth_batch_submit(1);
  job->set_iodepth_batch_complete_min(1);
  job->set_iodepth_batch_complete_max(1);
  job->set_ioengine(v1::IO_URING);
  job->set_direct(true);  // no page cache, no readahead: each I/O is one request
  job->set_thread(true);
  job->set_io_size(kIoSize);
  return a;
}

// The instances of `tracefs` named for blkbench runs, now.
std::vector<std::string> BlkbenchInstances() {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e :
       std::filesystem::directory_iterator(std::string(kTracefs) + "/instances", ec)) {
    if (absl::StartsWith(e.path().filename().string(), "blkbench-")) {
      out.push_back(e.path().filename());
    }
  }
  return out;
}

// The default runner, noting the blkbench trace instances that exist while the job runs.
class WatchingRunner final : public Runner {
 public:
  WatchingRunner(std::unique_ptr<Runner> inner, std::vector<std::string>& seen)
      : inner_(std::move(inner)), seen_(seen) {}
  absl::StatusOr<v1::RunResult> Run(const RunContext& ctx) override {
    seen_ = BlkbenchInstances();
    return inner_->Run(ctx);
  }

 private:
  std::unique_ptr<Runner> inner_;
  std::vector<std::string>& seen_;
};

class TraceRunTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (getuid() != 0) GTEST_SKIP() << "needs root (tracefs, loop devices)";
    loop_ = LoopDevice::Create(kDeviceMiB);
    if (loop_ == nullptr) GTEST_SKIP() << "loop devices unavailable";
    Init({{loop_->path(), "loop"}});
  }
  void Init(std::vector<AllowedDevice> devices) {
    config_.state_dir = state_.path();
    config_.devices = std::move(devices);
    executor_.reset();
    journal_.reset();  // one journal per state directory at a time
    auto journal = QueueSettingsJournal::Open(state_.path());
    ASSERT_TRUE(journal.ok()) << journal.status();
    journal_ = std::move(*journal);
    executor_ = std::make_unique<RunExecutor>(
        config_, *journal_, [this](const std::string& device_class) -> std::unique_ptr<Runner> {
          return std::make_unique<WatchingRunner>(DefaultRunnerFactory()(device_class), seen_);
        });
    executor_->OfferDevices();
  }
  v1::RunFinished Run(const v1::RunAssignment& a) {
    return executor_->Execute(a, cancel_, [](const v1::Sample&) {});
  }
  double Internal(const v1::RunFinished& f, const std::string& key) {
    auto it = f.result().internals().find(key);
    EXPECT_NE(it, f.result().internals().end()) << key;
    return it == f.result().internals().end() ? -1 : it->second;
  }
  // Left as found: no instance and no journal entry.
  void ExpectNothingLeft() {
    EXPECT_THAT(BlkbenchInstances(), IsEmpty());
    absl::StatusOr<std::vector<std::string>> entries = journal_->settings_journal().List();
    ASSERT_TRUE(entries.ok()) << entries.status();
    EXPECT_THAT(*entries, IsEmpty());
  }

  TempDir state_{"trace_run_state"};
  std::unique_ptr<LoopDevice> loop_;
  AgentConfig config_;
  std::unique_ptr<QueueSettingsJournal> journal_;
  std::unique_ptr<RunExecutor> executor_;
  std::vector<std::string> seen_;
  std::atomic<bool> cancel_{false};
};

// A sequential read at iodepth 1 issues kIos requests, each starting where the previous
// ended but the first: seq_ratio (kIos-1)/kIos. Other readers of the device (udev's probe
// after the agent's exclusive open) may add a few requests; the bound leaves room for
// kIos/10 of them. Every issued request completes before the trace stops.
TEST_F(TraceRunTest, ASequentialReadIsSequentialAtTheDevice) {
  v1::RunFinished f = Run(Assignment(loop_->path(), v1::READ, 1));
  ASSERT_EQ(f.outcome(), v1::RUN_OUTCOME_SUCCEEDED) << f.error();
  EXPECT_THAT(seen_, ::testing::ElementsAre("blkbench-run-7-1"));
  const double issued = Internal(f, "dispatch.requests");
  RecordProperty("issued", std::to_string(issued));
  RecordProperty("seq_ratio", std::to_string(Internal(f, "seq_ratio")));
  EXPECT_GE(issued, kIos);
  EXPECT_LE(issued, kIos + kIos / 10);
  EXPECT_EQ(Internal(f, "trace_completed"), issued);
  EXPECT_EQ(Internal(f, "trace_issued"), issued);
  EXPECT_EQ(Internal(f, "trace_lost_events"), 0) << "the ring overran: partial summary";
  EXPECT_GE(Internal(f, "seq_ratio"), (kIos - 1.0 - kIos / 10) / issued);
  // Ascending: nothing but a foreign request can go below its predecessor.
  EXPECT_LE(Internal(f, "trace.inversions"), kIos / 10);
  // One request at a time from the job: at most one more from a foreign reader.
  EXPECT_GE(Internal(f, "trace.inflight_max"), 1);
  EXPECT_LE(Internal(f, "trace.inflight_max"), 2);
  EXPECT_GT(Internal(f, "device.inflight_mean"), 0);
  EXPECT_LE(Internal(f, "device.inflight_mean"), 2);
  EXPECT_GT(Internal(f, "trace_d2c_p50_ns"), 0);
  ExpectNothingLeft();
}

// Random 4 KiB reads over kBlocks blocks: a request continues the previous one by chance
// with probability 1/kBlocks, so about kIos/kBlocks (0.06) of kIos are sequential; the
// bound (kIos/20 of them, 12) is never reached by chance. About half go below their
// predecessor.
TEST_F(TraceRunTest, ARandomReadIsNotSequentialAtTheDevice) {
  v1::RunFinished f = Run(Assignment(loop_->path(), v1::RANDREAD, 1));
  ASSERT_EQ(f.outcome(), v1::RUN_OUTCOME_SUCCEEDED) << f.error();
  const double issued = Internal(f, "dispatch.requests");
  RecordProperty("issued", std::to_string(issued));
  RecordProperty("seq_ratio", std::to_string(Internal(f, "seq_ratio")));
  RecordProperty("inversions", std::to_string(Internal(f, "trace.inversions")));
  EXPECT_GE(issued, kIos);
  EXPECT_EQ(Internal(f, "trace_completed"), issued);
  EXPECT_EQ(Internal(f, "trace_lost_events"), 0) << "the ring overran: partial summary";
  EXPECT_LE(Internal(f, "seq_ratio"), 1.0 / 20);
  EXPECT_GE(Internal(f, "trace.inversions"), kIos / 4);
  EXPECT_LE(Internal(f, "trace.inversions"), 3 * kIos / 4 + kIos / 10);
  static_assert(kBlocks == 4096);
  ExpectNothingLeft();
}

// Tracing is off by default: no instance exists while the job runs, none of the trace's
// keys is in the result, the journal never held a trace entry.
TEST_F(TraceRunTest, WithoutTraceNoInstanceIsMade) {
  v1::RunFinished f = Run(Assignment(loop_->path(), v1::READ, 0));
  ASSERT_EQ(f.outcome(), v1::RUN_OUTCOME_SUCCEEDED) << f.error();
  EXPECT_THAT(seen_, IsEmpty());
  EXPECT_EQ(f.result().internals().count("seq_ratio"), 0u);
  EXPECT_EQ(f.result().internals().count("trace_issued"), 0u);
  EXPECT_GT(f.result().device_stats().reads(), 0u);  // the diskstats annotation still runs
  ExpectNothingLeft();
}

// A cancelled run never calls annotate: Release stops the trace and removes its instance.
TEST_F(TraceRunTest, ACancelledRunRemovesItsTrace) {
  cancel_.store(true);
  v1::RunFinished f = Run(Assignment(loop_->path(), v1::READ, 1));
  EXPECT_EQ(f.outcome(), v1::RUN_OUTCOME_CANCELED) << f.error();
  ExpectNothingLeft();
}

// A regular file has no block layer to trace: the run fails before any I/O, saying so.
TEST_F(TraceRunTest, TraceOnARegularFileFailsAndLeavesNothing) {
  TempDir dir("trace_run_file");
  const std::string file = dir.File("data");
  std::ofstream(file) << std::string(4 << 20, '\0');
  Init({{file, "file"}});
  v1::RunFinished f = Run(Assignment(file, v1::READ, 1));
  EXPECT_EQ(f.outcome(), v1::RUN_OUTCOME_FAILED);
  EXPECT_THAT(f.error(), HasSubstr("trace: 1 needs a block device; " + file + " is not one"));
  ExpectNothingLeft();
}

}  // namespace
}  // namespace blkbench
