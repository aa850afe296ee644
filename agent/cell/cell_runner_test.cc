// RunCell with a recording Runner and DevicePreparation: the order prepare → run →
// release, what the runner is given, how errors combine; and the simulated device.
#include "agent/cell/cell_runner.h"

#include <string>
#include <vector>

#include "agent/cell/sim_device.h"
#include "engine/model/engine_runner.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace blkbench {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

struct Calls {
  std::vector<std::string> log;
  RunContext ctx;  // what the runner was given
};

class RecordingRunner final : public Runner {
 public:
  RecordingRunner(Calls& calls, absl::Status status) : calls_(calls), status_(status) {}
  absl::StatusOr<v1::RunResult> Run(const RunContext& ctx) override {
    calls_.log.push_back("run");
    calls_.ctx = ctx;
    if (!status_.ok()) return status_;
    v1::RunResult r;
    r.set_runner("recording");
    r.set_iops(42);
    return r;
  }

 private:
  Calls& calls_;
  absl::Status status_;
};

class RecordingDevice final : public DevicePreparation {
 public:
  RecordingDevice(Calls& calls, absl::Status prepare, absl::Status release)
      : calls_(calls), prepare_(prepare), release_(release) {}
  absl::StatusOr<PreparedDevice> Prepare(const CellRun& run) override {
    calls_.log.push_back("prepare " + run.device);
    if (!prepare_.ok()) return prepare_;
    PreparedDevice d;
    d.io_path = "/dev/resolved";
    d.facts.set_path(run.device);
    d.facts.set_size_bytes(1 << 20);
    d.facts.set_logical_block_size(4096);
    d.applied.set_scheduler("mq-deadline");
    d.place_job = [](uint32_t, int) { return absl::OkStatus(); };
    return d;
  }
  absl::Status Release() override {
    calls_.log.push_back("release");
    return release_;
  }

 private:
  Calls& calls_;
  absl::Status prepare_, release_;
};

CellRun RunOn(const std::string& device) {
  CellRun run;
  run.cell.mutable_job()->set_randseed(100);
  run.repeat = 3;
  run.device = device;
  run.name = "run-1-1";
  return run;
}

TEST(CellRunnerTest, PreparesRunsTheRepeatOnTheTargetAndReleases) {
  Calls calls;
  RecordingDevice device(calls, absl::OkStatus(), absl::OkStatus());
  RecordingRunner runner(calls, absl::OkStatus());
  absl::StatusOr<v1::RunResult> r = RunCell(RunOn("/dev/by-id/x"), device, runner);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(calls.log, ElementsAre("prepare /dev/by-id/x", "run", "release"));
  EXPECT_EQ(calls.ctx.cell.job().randseed(), 103u);  // CellForRepeat
  EXPECT_EQ(calls.ctx.target_path, "/dev/resolved");
  EXPECT_EQ(calls.ctx.target_size, uint64_t{1} << 20);
  EXPECT_EQ(calls.ctx.logical_block_size, 4096u);
  EXPECT_TRUE(static_cast<bool>(calls.ctx.place_job));
  EXPECT_EQ(r->iops(), 42);
  EXPECT_EQ(r->device().path(), "/dev/by-id/x");
  EXPECT_EQ(r->applied().scheduler(), "mq-deadline");
}

TEST(CellRunnerTest, AFailedPreparationRunsNothingAndReleasesNothing) {
  Calls calls;
  RecordingDevice device(calls, absl::FailedPreconditionError("refused: mounted"),
                         absl::OkStatus());
  RecordingRunner runner(calls, absl::OkStatus());
  absl::StatusOr<v1::RunResult> r = RunCell(RunOn("/dev/x"), device, runner);
  EXPECT_EQ(r.status(), absl::FailedPreconditionError("refused: mounted"));
  EXPECT_THAT(calls.log, ElementsAre("prepare /dev/x"));
}

TEST(CellRunnerTest, ReleasesAfterARunnerErrorAndKeepsItsCode) {
  Calls calls;
  RecordingDevice device(calls, absl::OkStatus(), absl::InternalError("restoring queue: EIO"));
  RecordingRunner runner(calls, absl::CancelledError("canceled"));
  absl::StatusOr<v1::RunResult> r = RunCell(RunOn("/dev/x"), device, runner);
  EXPECT_THAT(calls.log, ElementsAre("prepare /dev/x", "run", "release"));
  EXPECT_EQ(r.status().code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(r.status().message(), "canceled; restoring queue: EIO");
}

TEST(CellRunnerTest, AFailedReleaseFailsACompletedRun) {
  Calls calls;
  RecordingDevice device(calls, absl::OkStatus(), absl::InternalError("removing cgroups: EBUSY"));
  RecordingRunner runner(calls, absl::OkStatus());
  absl::StatusOr<v1::RunResult> r = RunCell(RunOn("/dev/x"), device, runner);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInternal);
  EXPECT_THAT(r.status().message(),
              HasSubstr("run completed but leaving the host as found failed: removing cgroups"));
}

TEST(SimulatedDeviceTest, TheTargetIsTheClassWithItsFactsAndTheCellsQueueSettings) {
  CellRun run = RunOn("sim:hdd");
  run.cell.mutable_queue()->set_scheduler("bfq");
  SimulatedDevicePreparation sim;
  absl::StatusOr<PreparedDevice> d = sim.Prepare(run);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->io_path, "sim:hdd");
  EXPECT_EQ(d->facts.SerializeAsString(), SimulatedDeviceFacts("sim:hdd").SerializeAsString());
  EXPECT_EQ(d->facts.size_bytes(), engine::kSimulatedDeviceBytes);
  EXPECT_TRUE(d->facts.simulated());
  EXPECT_TRUE(d->facts.rotational());
  EXPECT_FALSE(SimulatedDeviceFacts("sim:ssd").rotational());
  EXPECT_EQ(d->applied.scheduler(), "bfq");
  EXPECT_FALSE(static_cast<bool>(d->place_job));
  EXPECT_TRUE(sim.Release().ok());
}

TEST(SimulatedDeviceTest, ARealPathIsNotASimulatedDevice) {
  SimulatedDevicePreparation sim;
  EXPECT_EQ(sim.Prepare(RunOn("/dev/sda")).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace blkbench
