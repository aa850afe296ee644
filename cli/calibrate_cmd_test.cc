// `blkbench calibrate` through RunCli on real loop devices (skips without root): a mounted
// device is refused with nothing written and no preset; a short sweep writes a preset that
// `validate` and `sim` take as the target of a matrix, leaving the device as it was. And,
// without root, the twin's keys parse into cells whose device the engine builds.
#include "cli/calibrate_cmd.h"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "cli/cli.h"
#include "common/testing/command.h"
#include "common/testing/loop_device.h"
#include "engine/device/device_model.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "workloads/matrix.h"

namespace blkbench {
namespace {

using ::testing::HasSubstr;
using testing::LoopDevice;
using testing::TempDir;

int Cli(const std::vector<std::string>& args, std::string* out, std::string* err) {
  std::ostringstream o, e;
  const int rc = RunCli(args, o, e);
  *out = o.str();
  *err = e.str();
  return rc;
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

bool Exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

// The twin's keys after the sweep's job: 12 sim:ssd cells with the fitted parameters, on a
// device the engine's factory builds.
TEST(CalibrateTwinTest, TheTwinsKeysMakeCellsTheEngineRuns) {
  SsdTwin twin;
  twin.fit = {.ctrl_ns = 4'250,
              .bus_mbps = 2'000,
              .fixed_ns = 12'000,
              .write_ack_ns = 20'500,
              .queue_depth = 32};
  twin.queue_depth = 128;
  twin.machine = TwinMachine(2);
  EXPECT_EQ(twin.machine, "kvm-2vcpu");  // the smallest shipped profile with 2 CPUs or more
  const std::string text = CalibrationMatrixText("twin", 100, TwinTargetYaml(twin));
  absl::StatusOr<workloads::Matrix> m = workloads::ParseMatrix(text, "twin.yaml");
  ASSERT_TRUE(m.ok()) << m.status() << "\n" << text;
  ASSERT_EQ(m->cells.size(), 12u);
  const v1::CellSpec& cell = m->cells.back();
  EXPECT_EQ(cell.target().device_class(), "sim:ssd");
  EXPECT_EQ(cell.target().machine(), "kvm-2vcpu");
  EXPECT_EQ(cell.job().numjobs(), 1u);
  EXPECT_EQ(cell.queue().scheduler(), "none");
  const auto& p = cell.device_params();
  EXPECT_EQ(p.at("ssd.ctrl_us"), "4.250");
  EXPECT_EQ(p.at("ssd.write_ack_us"), "20.500");
  EXPECT_EQ(p.at("ssd.queue_depth"), "128");
  std::map<std::string, std::string> params(p.begin(), p.end());
  auto model = engine::MakeDeviceModel("ssd", params, 1);
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_EQ((*model)->queue_depth(), 128u);
}

class CalibrateCmdTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (getuid() != 0) GTEST_SKIP() << "needs root (loop devices, queue settings)";
    loop_ = LoopDevice::Create(kDeviceMiB);
    if (loop_ == nullptr) GTEST_SKIP() << "loop devices unavailable";
    preset_ = dir_.File("twin.yaml");
    state_ = dir_.File("state");
  }
  std::vector<std::string> Args(const std::string& runtime_ms) {
    return {"calibrate", loop_->path(),  "--out",    preset_, "--state-dir",
            state_,      "--runtime_ms", runtime_ms, "-q"};
  }

  static constexpr uint64_t kDeviceMiB = 32;
  TempDir dir_{"calibrate_cmd_test"};
  std::unique_ptr<LoopDevice> loop_;
  std::string preset_, state_;
};

TEST_F(CalibrateCmdTest, AMountedDeviceIsRefusedAndNothingIsWritten) {
  if (!testing::HaveCommand("mkfs.ext4")) GTEST_SKIP() << "mkfs.ext4 missing";
  const std::string mount_point = dir_.File("mnt");
  auto unmount = testing::MountExt4ReadOnly(loop_->path(), mount_point);
  ASSERT_TRUE(unmount.ok()) << unmount.status();
  const uint64_t sectors = loop_->SectorsWritten();
  const std::string scheduler = loop_->SysfsQueue("scheduler");

  std::string out, err;
  EXPECT_EQ(Cli(Args("50"), &out, &err), 1);
  EXPECT_THAT(err, HasSubstr("blkbench calibrate: refused: " + loop_->path() + " is mounted at " +
                             mount_point));
  EXPECT_THAT(err, HasSubstr("blkbench calibrate: no preset written"));
  EXPECT_FALSE(Exists(preset_));
  EXPECT_EQ(out, "");
  EXPECT_EQ(loop_->SectorsWritten(), sectors);
  EXPECT_EQ(loop_->SysfsQueue("scheduler"), scheduler);
}

// 12 cells x 3 runs of 40 ms: the preset names the device, carries the twin's error on each swept
// cell, and is the target of a matrix that validate accepts and sim runs.
TEST_F(CalibrateCmdTest, AShortSweepWritesAPresetThatSimRuns) {
  const std::string scheduler = loop_->SysfsQueue("scheduler");
  const std::string tags = loop_->SysfsQueue("nr_requests");
  const uint64_t sectors = loop_->SectorsWritten();
  std::string out, err;
  ASSERT_EQ(Cli(Args("40"), &out, &err), 0) << err;
  EXPECT_THAT(out, HasSubstr("preset: " + preset_));
  // The randwrite cells ran on the device; it is left as found.
  EXPECT_GT(loop_->SectorsWritten(), sectors);
  EXPECT_EQ(loop_->SysfsQueue("scheduler"), scheduler);
  for (const auto& e : std::filesystem::directory_iterator(state_)) {
    EXPECT_EQ(e.path().filename().string().front(), '.') << "left in the journal: " << e.path();
  }

  const std::string preset = ReadAll(preset_);
  EXPECT_THAT(preset, HasSubstr("The engine's twin of " + loop_->path() + " (loop"));
  // One comment line per swept cell with its real and twin IOPS and the error.
  const std::regex row(
      R"(#   rw=rand(read|write) bs=\d+k iodepth=\d+ +[\d.]+k? +[\d.]+k? +-?[\d.]+ )");
  size_t rows = 0;
  std::istringstream lines(preset);
  for (std::string line; std::getline(lines, line);) rows += std::regex_search(line, row);
  EXPECT_EQ(rows, 12u) << preset;
  // The tag depth is the device's (nr_requests under none), not the sweep's deepest 32.
  if (scheduler.find("[none]") != std::string::npos) {
    EXPECT_THAT(preset, HasSubstr("queue_depth: " + tags + ","));
  }

  const std::string matrix = dir_.File("m.yaml");
  std::ofstream(matrix) << "name: on-the-twin\nrepeats: 1\n"
                           "job: {rw: randwrite, bs: 4k, iodepth: 32, direct: 1, "
                           "ioengine: io_uring, runtime: 100ms, time_based: 1}\n"
                           "matrix:\n  scheduler: [none, mq-deadline]\n  numjobs: [1, 2]\n"
                        << preset;
  ASSERT_EQ(Cli({"validate", matrix}, &out, &err), 0) << err << "\n" << ReadAll(matrix);
  ASSERT_EQ(Cli({"sim", matrix, "-q", "--format", "csv"}, &out, &err), 0) << err;
  EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 5) << out;  // header + 4 runs
  EXPECT_THAT(out, HasSubstr("sim:ssd"));
}

}  // namespace
}  // namespace blkbench
