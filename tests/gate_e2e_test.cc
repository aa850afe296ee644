// The regression gate end to end, as a CI job would use it: a controller (gRPC on
// loopback, SQLite file) and an agent running sim: devices on the engine; `blkbench gate`
// through the CLI with JUnit and HTML output, --auto-repeat through the AddRepeats RPC,
// and `blkbench history` across experiments. Simulated null_blk is deterministic for a
// given seed and every repeat has its own seed, so the verdicts below are exact.
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "cli/cli.h"
#include "common/resolved_job.h"
#include "common/testing/loop_device.h"
#include "engine/model/engine_runner.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/test_cluster.h"

namespace blkbench {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using testing::ReadFileOr;
using testing::TempDir;

// A fixed-depth null_blk job (bs 4k by default); `device` is the null_blk section,
// `extra` more top-level keys (a matrix block).
std::string Matrix(const std::string& name, int repeats, const std::string& device,
                   const std::string& extra = "") {
  return absl::StrCat("name: ", name, "\nrepeats: ", repeats,
                      "\njob: {rw: randread, iodepth: 8, ioengine: io_uring, "
                      "runtime: 20ms, time_based: 1}\n",
                      extra, "target: {device_class: sim:null_blk, kernel: sim:6.16}\n",
                      "device: {null_blk: {irqmode: 2, ", device, "}}\n");
}

class GateE2eTest : public testing::ClusterTest {
 protected:
  GateE2eTest() : ClusterTest("gate_e2e") {}

  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(ClusterTest::SetUp());
    AgentConfig config;
    config.agent_id = "agent-sim";
    config.sim_devices.emplace_back("sim:ssd-seed004");  // for the seed examples
    config.state_dir = agent_dir_.path();
    config.controller = ControllerAddress();
    agent_ = std::make_unique<testing::AgentProcess>(config);
    ASSERT_TRUE(agent_->ok());
    ASSERT_TRUE(agent_->agent().WaitConnected(true, absl::Seconds(20)));
  }

  // Submits and runs a matrix to the end; returns the experiment id as text.
  std::string Run(const std::string& name, const std::string& matrix) {
    auto e = controller().Submit(name + ".yaml", matrix);
    EXPECT_TRUE(e.ok()) << e.status();
    if (!e.ok()) return "0";
    EXPECT_EQ(WaitForEnd(e->id()).state(), v1::EXPERIMENT_DONE);
    return std::to_string(e->id());
  }

  TempDir agent_dir_{"gate_e2e_agent"};
  std::unique_ptr<testing::AgentProcess> agent_;
};

TEST_F(GateE2eTest, InjectedSlowdownFailsWithAJUnitFailureNamingTheCell) {
  // null_blk completing 20 us later at a fixed queue depth: IOPS drop by ~half.
  const std::string id =
      Run("slow", Matrix("slow", 5, "completion_nsec: [20000, 40000]", "matrix: {bs: [4k, 8k]}\n"));
  const std::string junit = dir_.File("gate.xml");
  const std::string html = dir_.File("gate.html");
  std::string out, err;
  ASSERT_EQ(Cli({"gate", "--experiment", id, "--axis", "null_blk.completion_nsec", "--baseline",
                 "20000", "--candidate", "40000", "--junit", junit, "--html", html},
                &out, &err),
            1)
      << out << err;
  EXPECT_THAT(out, HasSubstr("regression of iops on cell 'bs=4k'"));
  const std::string x = ReadFileOr(junit);
  EXPECT_THAT(x, HasSubstr("failures=\"8\""));  // iops, bw, p99, p99.9 of both cells
  EXPECT_THAT(x, HasSubstr("<testcase classname=\"bs=8k\" name=\"iops\""));
  EXPECT_THAT(x, HasSubstr("name=\"iops\" time=\"0\">\n      <failure type=\"regression\""));
  EXPECT_THAT(x, HasSubstr("regression of iops on cell"));
  EXPECT_THAT(x, HasSubstr("reproduce: matrix slow.yaml"));
  const std::string h = ReadFileOr(html);
  EXPECT_THAT(h, HasSubstr("FAIL: regression (exit 1)"));
  EXPECT_THAT(h, HasSubstr("<tr class=\"regression\">"));
  EXPECT_THAT(h, HasSubstr("<polyline "));  // the merged latency histograms
  EXPECT_THAT(h, Not(HasSubstr("<script")));
}

TEST_F(GateE2eTest, IdenticalRerunPasses) {
  const std::string a = Run("same", Matrix("same", 5, "completion_nsec: 20000"));
  const std::string b = Run("same", Matrix("same", 5, "completion_nsec: 20000"));
  const std::string junit = dir_.File("gate.xml");
  std::string out, err;
  EXPECT_EQ(Cli({"gate", "--baseline", a, "--candidate", b, "--junit", junit}, &out, &err), 0)
      << out << err;
  EXPECT_THAT(out, HasSubstr("0 regressions"));
  EXPECT_THAT(ReadFileOr(junit), HasSubstr("failures=\"0\" errors=\"0\" skipped=\"0\""));
}

TEST_F(GateE2eTest, OneRepeatIsInconclusiveNotARegression) {
  const std::string id = Run("once", Matrix("once", 1, "completion_nsec: [20000, 40000]"));
  std::string out, err;
  EXPECT_EQ(Cli({"gate", "--experiment", id, "--axis", "null_blk.completion_nsec", "--baseline",
                 "20000", "--candidate", "40000"},
                &out, &err),
            2)
      << out << err;
  EXPECT_THAT(out, HasSubstr("inconclusive"));
  EXPECT_THAT(out, Not(HasSubstr("REGRESSION")));
}

TEST_F(GateE2eTest, AutoRepeatRunsMoreRepeatsOfInconclusiveCellsAndDecidesAgain) {
  // One repeat per side cannot decide; --auto-repeat asks for just these cells' repeats.
  const std::string id = Run("auto", Matrix("auto", 1, "completion_nsec: [20000, 40000]"));
  std::string out, err;
  EXPECT_EQ(Cli({"gate", "--experiment", id, "--axis", "null_blk.completion_nsec", "--baseline",
                 "20000", "--candidate", "40000", "--auto-repeat", "4"},
                &out, &err),
            1)
      << out << err;
  EXPECT_THAT(err, HasSubstr("auto-repeat round 1: 2 more repeat(s) of 2 cell(s)"));
  EXPECT_THAT(out, HasSubstr("regression of iops"));
  const v1::Experiment e = WaitForEnd(std::stoull(id));
  EXPECT_EQ(e.state(), v1::EXPERIMENT_DONE);
  ASSERT_EQ(e.runs_size(), 6);  // 2 cells x (1 + 2)
  for (const v1::Run& r : e.runs()) {
    EXPECT_EQ(r.state(), v1::RUN_DONE);
    EXPECT_EQ(r.attempt(), 1u);
  }
  EXPECT_EQ(e.runs(5).repeat(), 2u);

  // Two identical one-repeat experiments: more repeats settle them as "no change".
  const std::string a = Run("same", Matrix("same", 1, "completion_nsec: 20000"));
  const std::string b = Run("same", Matrix("same", 1, "completion_nsec: 20000"));
  EXPECT_EQ(Cli({"gate", "--baseline", a, "--candidate", b}, &out, &err), 2) << out << err;
  EXPECT_EQ(Cli({"gate", "--baseline", a, "--candidate", b, "--auto-repeat", "3"}, &out, &err), 0)
      << out << err;
  EXPECT_THAT(out, HasSubstr("0 inconclusive"));
  EXPECT_EQ(controller().GetExperiment(std::stoull(a), false)->runs_size(), 3);
  EXPECT_EQ(controller().GetExperiment(std::stoull(b), false)->runs_size(), 3);
}

TEST_F(GateE2eTest, AddRepeatsContinuesRepeatNumbersAndRejectsBadRequests) {
  const uint64_t id = std::stoull(
      Run("add", Matrix("add", 2, "completion_nsec: 20000", "matrix: {bs: [4k, 8k]}\n")));
  auto added = controller().AddRepeats(id, {1}, 2);
  ASSERT_TRUE(added.ok()) << added.status();
  ASSERT_EQ(added->run_ids_size(), 2);
  const v1::Experiment e = WaitForEnd(id);
  EXPECT_EQ(e.state(), v1::EXPERIMENT_DONE);
  ASSERT_EQ(e.runs_size(), 6);
  std::vector<uint32_t> cell1;
  for (const v1::Run& r : e.runs()) {
    EXPECT_EQ(r.state(), v1::RUN_DONE) << r.error();
    if (r.cell_index() == 1) cell1.push_back(r.repeat());
  }
  EXPECT_EQ(cell1, (std::vector<uint32_t>{0, 1, 2, 3}));
  EXPECT_EQ(controller().AddRepeats(id, {7}, 1).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(controller().AddRepeats(id, {0}, 0).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(controller().AddRepeats(id + 100, {0}, 1).status().code(), absl::StatusCode::kNotFound);
}

TEST_F(GateE2eTest, HistoryFindsTheExperimentWhereIopsDropped) {
  // Ten nightly experiments of the same cell; from the sixth on the device is slower.
  std::string last;
  for (int i = 0; i < 10; ++i) {
    last = Run("nightly",
               Matrix("nightly", 1, i < 5 ? "completion_nsec: 20000" : "completion_nsec: 30000"));
  }
  std::string out, err;
  ASSERT_EQ(Cli({"history", "--metric", "iops", "--cell", "bs=4k,iodepth=8", "--device-class",
                 "sim:null_blk"},
                &out, &err),
            0)
      << err;
  EXPECT_THAT(out, HasSubstr("10 points"));
  EXPECT_THAT(out, HasSubstr("change point at #5 (experiment 6, kernel sim:6.16)")) << out;
  EXPECT_THAT(out, HasSubstr("worse"));
  ASSERT_EQ(Cli({"history", "--metric", "p99", "--cell", "bs=4k", "--format", "json"}, &out), 0);
  EXPECT_THAT(out, HasSubstr("\"change_points\""));
  EXPECT_THAT(out, HasSubstr("\"experiment_id\": \"" + last + "\""));
  // Bad input never reaches the controller.
  EXPECT_EQ(Cli({"history", "--metric", "iops"}, &out, &err), 2);
  EXPECT_EQ(Cli({"history", "--metric", "nope", "--cell", "bs=4k"}, &out, &err), 2);
}

// A seed example with its runtime cut to `runtime` (the examples say "runtime: <n>ms").
std::string SeedMatrix(const std::string& file, const std::string& runtime) {
  std::string text = ReadFileOr(std::string(BLKBENCH_SOURCE_DIR) + "/examples/seeds/" + file);
  const size_t at = text.find("  runtime: ");
  if (at != std::string::npos) {
    text.replace(at, text.find('\n', at) - at, "  runtime: " + runtime);
  }
  return text;
}

// Seed 000 through the controller: the batch-dispatch kernel is an improvement of IOPS,
// not a regression, and the gate passes.
TEST_F(GateE2eTest, Seed000BatchDispatchIsReportedAsAnImprovement) {
  const std::string id = Run("seed000", SeedMatrix("000-batch-dispatch.yaml", "10ms"));
  std::string out, err;
  EXPECT_EQ(
      Cli({"gate", "--experiment", id, "--axis", "kernel", "--baseline", "sim:6.16", "--candidate",
           "sim:6.16+dd-batch-dispatch+bfq-batch-dispatch", "--metrics", "iops"},
          &out, &err),
      0)
      << out << err;
  EXPECT_THAT(out, HasSubstr("improvement"));
  EXPECT_THAT(out, HasSubstr("0 regressions"));
}

// The seed matrices run unchanged on an agent's sim: devices, and every run's event trace
// is the one `blkbench sim` produces locally for the same cell and repeat.
TEST_F(GateE2eTest, SeedExamplesThroughTheControllerMatchLocalEngineRuns) {
  for (const auto& [file, runtime] : std::vector<std::pair<std::string, std::string>>{
           {"002-deadline-contention.yaml", "5ms"}, {"004-bfq-one-group.yaml", "50ms"}}) {
    const std::string id = Run(file, SeedMatrix(file, runtime));
    const v1::Experiment e = *controller().GetExperiment(std::stoull(id), true);
    ASSERT_EQ(e.state(), v1::EXPERIMENT_DONE) << file << ": " << e.error();
    for (const v1::Run& r : e.runs()) {
      ASSERT_EQ(r.state(), v1::RUN_DONE) << file << ": " << r.error();
      RunContext ctx;
      ctx.cell = CellForRepeat(e.cells(static_cast<int>(r.cell_index())), r.repeat());
      ctx.target_size = engine::kSimulatedDeviceBytes;
      absl::StatusOr<v1::RunResult> local = engine::NewEngineRunner()->Run(ctx);
      ASSERT_TRUE(local.ok()) << local.status();
      EXPECT_EQ(r.result().internals().at("engine.trace_hash"),
                local->internals().at("engine.trace_hash"))
          << file << " run " << r.id();
      EXPECT_EQ(r.result().io().read_ios(), local->io().read_ios());
    }
  }
}

TEST(GateProofCommand, RegeneratesTheSectionBetweenItsMarkers) {
  TempDir dir("gate_proof");
  const std::string doc = dir.File("gating.md");
  {
    std::ofstream f(doc);
    f << "# prose before\n<!-- gate-proof:begin -->\nstale\n<!-- gate-proof:end -->\nafter\n";
  }
  std::ostringstream out, err;
  ASSERT_EQ(RunCli({"gate-proof", "--quick", "--trials", "20", "--write", doc}, out, err), 0)
      << err.str();
  const std::string text = ReadFileOr(doc);
  EXPECT_EQ(text.rfind("# prose before\n<!-- gate-proof:begin -->\nGenerated by", 0), 0u);
  EXPECT_THAT(text, Not(HasSubstr("stale")));
  EXPECT_THAT(text, HasSubstr("| 5 | 2 % | **"));
  EXPECT_THAT(text, HasSubstr("#### Engine runs (sim:ssd"));
  EXPECT_THAT(text, HasSubstr("<!-- gate-proof:end -->\nafter"));
  // Deterministic: the same seeds give the same tables.
  std::ostringstream again;
  ASSERT_EQ(RunCli({"gate-proof", "--quick", "--trials", "20"}, again, err), 0);
  EXPECT_EQ(again.str(), out.str());
}

}  // namespace
}  // namespace blkbench
