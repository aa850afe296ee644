// End-to-end backbone test with real parts: a controller (gRPC on loopback TCP, SQLite
// file) and two agents dialling it, each with its own loop device, run an 8-cell x
// 2-repeat matrix with the io_uring executor. Every result lands in SQLite exactly
// once, the devices' queue settings are restored, and `blkbench results` prints them.
#include <sqlite3.h>

#include <fstream>

#include "absl/strings/str_split.h"
#include "common/testing/loop_device.h"
#include "gmock/gmock.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "tests/test_cluster.h"

namespace blkbench {
namespace {

using testing::AgentProcess;
using ::testing::HasSubstr;
using testing::LoopDevice;
using ::testing::Not;
using testing::TempDir;

constexpr char kMatrix[] = R"(name: backbone
repeats: 2
job: {direct: 1, ioengine: io_uring, size: 32m, iodepth: 8, runtime: 300ms, time_based: 1}
matrix:
  scheduler: [none, mq-deadline]
  rw: [randread, randwrite]
  bs: [4k, 16k]
target: {device_class: loop}
)";

class BackboneTest : public testing::ClusterTest {
 protected:
  BackboneTest() : ClusterTest("backbone_test") {}
};

int64_t SqlCount(const std::string& db_path, const std::string& sql) {
  sqlite3* db = nullptr;
  int64_t n = -1;
  if (sqlite3_open_v2(db_path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW) {
      n = sqlite3_column_int64(st, 0);
    }
    sqlite3_finalize(st);
  }
  sqlite3_close(db);
  return n;
}

TEST_F(BackboneTest, MatrixRunsAcrossTwoAgentsAndEveryResultIsStoredOnce) {
  auto loop_a = LoopDevice::Create(64);
  auto loop_b = LoopDevice::Create(64);
  if (!loop_a || !loop_b) GTEST_SKIP() << "loop devices unavailable";
  const std::string sched_a = loop_a->SysfsQueue("scheduler");
  const std::string sched_b = loop_b->SysfsQueue("scheduler");

  TempDir state_a("agent_a"), state_b("agent_b");
  AgentProcess a("agent-a", state_a.path(), {{loop_a->path(), "loop"}}, server_->port());
  AgentProcess b("agent-b", state_b.path(), {{loop_b->path(), "loop"}}, server_->port());
  ASSERT_TRUE(a.agent().WaitConnected(true, absl::Seconds(20)));
  ASSERT_TRUE(b.agent().WaitConnected(true, absl::Seconds(20)));

  std::string matrix_path = dir_.File("backbone.yaml");
  {
    std::ofstream f(matrix_path);
    f << kMatrix;
  }
  std::string out, err;
  ASSERT_EQ(Cli({"submit", matrix_path}, &out, &err), 0) << err;
  EXPECT_THAT(out, HasSubstr("8 cells x 2 repeats = 16 runs"));
  auto listed = server_->controller().ListExperiments(0);
  ASSERT_EQ(listed->size(), 1u);
  const uint64_t id = (*listed)[0].id();

  v1::Experiment e = WaitForEnd(id, absl::Minutes(3));
  ASSERT_EQ(e.state(), v1::EXPERIMENT_DONE) << e.error();
  ASSERT_EQ(e.runs_size(), 16);
  std::map<std::string, int> per_agent;
  for (const v1::Run& r : e.runs()) {
    EXPECT_EQ(r.state(), v1::RUN_DONE) << r.error();
    EXPECT_EQ(r.attempt(), 1u);
    EXPECT_GE(r.samples(), 1u) << "run " << r.id();
    per_agent[r.agent_id()]++;
    const v1::CellSpec& cell = e.cells(r.cell_index());
    EXPECT_EQ(r.result().applied().scheduler(), cell.queue().scheduler());
    EXPECT_GT(r.result().io().read_ios() + r.result().io().write_ios(), 0u);
    EXPECT_EQ(r.result().runner(), "io_uring");
    EXPECT_FALSE(r.result().host().kernel_release().empty());
    EXPECT_TRUE(r.result().device().is_block());
  }
  EXPECT_EQ(per_agent.size(), 2u) << "runs should spread over both agents' devices";

  // Exactly one result row per run, straight from the SQLite file.
  const std::string db = dir_.File("blkbench.db");
  EXPECT_EQ(SqlCount(db, "SELECT COUNT(*) FROM results"), 16);
  EXPECT_EQ(SqlCount(db, "SELECT COUNT(DISTINCT run_id) FROM results"), 16);

  // The host is left as found.
  EXPECT_EQ(loop_a->SysfsQueue("scheduler"), sched_a);
  EXPECT_EQ(loop_b->SysfsQueue("scheduler"), sched_b);

  ASSERT_EQ(Cli({"results", std::to_string(id), "--format", "csv"}, &out), 0);
  std::vector<std::string> lines = absl::StrSplit(out, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 17u) << out;
  EXPECT_THAT(lines[0], HasSubstr(",axes.scheduler,axes.rw,axes.bs,"));
  EXPECT_THAT(lines[0], HasSubstr(",iops,bandwidth_bytes_per_second,"));
  // JSON everywhere: one schema with /api/v1/results, fio's spellings, numbers as numbers.
  ASSERT_EQ(Cli({"results", std::to_string(id), "--format", "json"}, &out), 0);
  google::protobuf::Value rows;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(out, &rows).ok()) << out;
  ASSERT_EQ(rows.list_value().values_size(), 16);
  const auto& row0 = rows.list_value().values(0).struct_value().fields();
  EXPECT_EQ(row0.at("state").string_value(), "done");
  EXPECT_TRUE(row0.at("rw").string_value() == "randread" ||
              row0.at("rw").string_value() == "randwrite");
  EXPECT_GT(row0.at("iops").number_value(), 0);
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"list", "--format", "json"},
        std::vector<std::string>{"agents", "--format=json"},
        std::vector<std::string>{"show", std::to_string(id), "--format", "json"}}) {
    ASSERT_EQ(Cli(args, &out), 0) << args[0];
    google::protobuf::Value v;
    EXPECT_TRUE(google::protobuf::util::JsonStringToMessage(out, &v).ok())
        << args[0] << ": " << out;
  }
  ASSERT_EQ(Cli({"results", std::to_string(id)}, &out), 0);
  EXPECT_THAT(out, HasSubstr("scheduler=mq-deadline rw=randwrite bs=16k"));
  // fio's JSON shape, parseable as JSON: one job per cell by default, one per run on request.
  ASSERT_EQ(Cli({"results", std::to_string(id), "--format", "fio-json"}, &out), 0);
  google::protobuf::Struct per_cell;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(out, &per_cell).ok()) << out;
  EXPECT_EQ(per_cell.fields().at("jobs").list_value().values_size(), 8);
  ASSERT_EQ(Cli({"results", std::to_string(id), "--format", "fio-json", "--per", "run"}, &out), 0);
  google::protobuf::Struct fio;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(out, &fio).ok()) << out;
  const auto& jobs = fio.fields().at("jobs").list_value();
  ASSERT_EQ(jobs.values_size(), 16);
  const auto& job0 = jobs.values(0).struct_value().fields();
  EXPECT_GT(job0.at("read").struct_value().fields().at("total_ios").number_value() +
                job0.at("write").struct_value().fields().at("total_ios").number_value(),
            0);
  EXPECT_TRUE(job0.at("read").struct_value().fields().at("clat_ns").struct_value().fields().count(
      "percentile"));
  ASSERT_EQ(Cli({"agents"}, &out), 0);
  EXPECT_THAT(out, HasSubstr("agent-a"));
  EXPECT_THAT(out, HasSubstr("connected"));
}

TEST_F(BackboneTest, MountedDeviceIsRefusedAndNothingIsWritten) {
  auto loop = LoopDevice::Create(64);
  if (!loop) GTEST_SKIP() << "loop devices unavailable";
  TempDir mnt("mnt");
  if (testing::RunCommand("mkfs.ext4 -q -F " + loop->path() + " >/dev/null 2>&1") != 0 ||
      testing::RunCommand("mount -o ro " + loop->path() + " " + mnt.path()) != 0) {
    GTEST_SKIP() << "mkfs.ext4/mount unavailable";
  }
  testing::MountGuard unmount(mnt.path());
  const uint64_t writes_before = loop->WritesCompleted();

  TempDir state("agent");
  AgentProcess a("agent-m", state.path(), {{loop->path(), "loop"}}, server_->port());
  ASSERT_TRUE(a.agent().WaitConnected(true, absl::Seconds(20)));
  auto e = server_->controller().Submit(
      "w.yaml",
      "name: w\njob: {rw: randwrite, direct: 1, ioengine: io_uring, runtime: 200ms, "
      "time_based: 1, size: 8m}\ntarget: {device_class: loop}\n");
  ASSERT_TRUE(e.ok()) << e.status();
  v1::Experiment done = WaitForEnd(e->id(), absl::Minutes(1));
  EXPECT_EQ(done.state(), v1::EXPERIMENT_FAILED);
  ASSERT_EQ(done.runs_size(), 1);
  EXPECT_EQ(done.runs(0).state(), v1::RUN_FAILED);
  EXPECT_THAT(done.runs(0).error(), HasSubstr("mounted"));
  EXPECT_EQ(loop->WritesCompleted(), writes_before);
}

TEST_F(BackboneTest, CancelStopsRunningRunAndRestoresDevice) {
  auto loop = LoopDevice::Create(64);
  if (!loop) GTEST_SKIP() << "loop devices unavailable";
  const std::string sched = loop->SysfsQueue("scheduler");
  const std::string other = loop->OtherScheduler();  // bfq when the kernel has it
  if (other.empty()) GTEST_SKIP() << "the loop device offers one scheduler only";
  TempDir state("agent");
  AgentProcess a("agent-c", state.path(), {{loop->path(), "loop"}}, server_->port());
  ASSERT_TRUE(a.agent().WaitConnected(true, absl::Seconds(20)));
  auto e = server_->controller().Submit(
      "long.yaml",
      "name: long\nrepeats: 3\njob: {rw: randread, direct: 1, ioengine: io_uring, runtime: 10m, "
      "time_based: 1, size: 8m, scheduler: " +
          other + "}\ntarget: {device_class: loop}\n");
  ASSERT_TRUE(e.ok()) << e.status();
  // Wait until the first run streams a sample, i.e. it is really running.
  uint64_t seen = 0;
  const absl::Time deadline = absl::Now() + absl::Seconds(30);
  while (absl::Now() < deadline) {
    auto cur = server_->controller().GetExperiment(e->id(), false);
    if (cur->runs(0).samples() > 0) break;
    seen = server_->controller().WaitForChange(seen, absl::Seconds(1));
  }
  EXPECT_THAT(loop->SysfsQueue("scheduler"), HasSubstr("[" + other + "]"));
  std::string out;
  ASSERT_EQ(Cli({"cancel", std::to_string(e->id())}, &out), 0);
  v1::Experiment done = WaitForEnd(e->id(), absl::Seconds(30));
  EXPECT_EQ(done.state(), v1::EXPERIMENT_CANCELED);
  for (const auto& r : done.runs()) EXPECT_EQ(r.state(), v1::RUN_CANCELED);
  EXPECT_EQ(loop->SysfsQueue("scheduler"), sched);
}

TEST_F(BackboneTest, SimulatedDevicesRunThroughControllerAndAgent) {
  TempDir state("agent_sim");
  AgentProcess a("agent-sim", state.path(), {}, server_->port());  // sim devices only
  ASSERT_TRUE(a.agent().WaitConnected(true, absl::Seconds(20)));
  auto e = server_->controller().Submit(
      "sim.yaml",
      "name: sim\nrepeats: 2\njob: {rw: randread, bs: 4k, iodepth: 16, ioengine: io_uring, "
      "runtime: 20ms, time_based: 1}\nmatrix:\n  device_class: [sim:null_blk, sim:ssd]\n"
      "target: {kernel: sim:6.16}\n");
  ASSERT_TRUE(e.ok()) << e.status();
  v1::Experiment done = WaitForEnd(e->id(), absl::Minutes(2));
  ASSERT_EQ(done.state(), v1::EXPERIMENT_DONE) << done.error();
  ASSERT_EQ(done.runs_size(), 4);
  for (const v1::Run& r : done.runs()) {
    EXPECT_EQ(r.result().runner(), "engine");
    EXPECT_TRUE(r.result().device().simulated());
    EXPECT_EQ(r.device_path(), done.cells(r.cell_index()).target().device_class());
    EXPECT_GT(r.result().iops(), 0);
  }
}

TEST_F(BackboneTest, GateFlagsAnInjectedSlowdownAndPassesANoOp) {
  TempDir state("agent_gate");
  AgentProcess a("agent-gate", state.path(), {}, server_->port());
  ASSERT_TRUE(a.agent().WaitConnected(true, absl::Seconds(20)));
  // A known slowdown: null_blk completing 20 us later at a fixed queue depth.
  auto e = server_->controller().Submit(
      "gate.yaml",
      "name: gate\nrepeats: 5\njob: {rw: randread, bs: 4k, iodepth: 8, ioengine: io_uring, "
      "runtime: 20ms, time_based: 1}\nmatrix:\n  kernel: [sim:6.16, sim:6.16+plug-batch-retry]\n"
      "target: {device_class: sim:null_blk}\n"
      "device: {null_blk: {irqmode: 2, completion_nsec: [20000, 40000]}}\n");
  ASSERT_TRUE(e.ok()) << e.status();
  ASSERT_EQ(WaitForEnd(e->id(), absl::Minutes(2)).state(), v1::EXPERIMENT_DONE);
  const std::string id = std::to_string(e->id());
  const std::string junit = dir_.File("gate.xml");

  std::string out, err;
  EXPECT_EQ(Cli({"gate", "--experiment", id, "--axis", "null_blk.completion_nsec", "--baseline",
                 "20000", "--candidate", "40000", "--junit", junit},
                &out, &err),
            1)
      << out << err;
  EXPECT_THAT(out, HasSubstr("regression of iops"));
  EXPECT_THAT(testing::ReadFileOr(junit), HasSubstr("<failure"));

  // The patch does not change null_blk's completion time: no regression.
  const int rc = Cli({"gate", "--experiment", id, "--axis", "kernel", "--baseline", "sim:6.16",
                      "--candidate", "sim:6.16+plug-batch-retry", "--metrics", "iops,p99"},
                     &out, &err);
  EXPECT_NE(rc, 1) << out << err;
  EXPECT_THAT(out, Not(HasSubstr("REGRESSION")));
}

}  // namespace
}  // namespace blkbench
