// The daemon-less experiment loop with a runner of its own: progress on stderr, results
// on stdout, errors even when quiet, cancels, exit codes, the store and the report.
#include "cli/local_run.h"

#include <atomic>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/testing/loop_device.h"
#include "controller/store/store_factory.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "workloads/matrix.h"

namespace blkbench {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::shared_ptr<const workloads::Matrix> ThreeCells() {
  auto m = workloads::ParseMatrix(
      "name: loop\njob: {rw: randread, bs: 4k, runtime: 10ms, time_based: 1}\n"
      "matrix:\n  iodepth: [1, 2, 4]\ntarget: {device_class: sim:null_blk}\n",
      "loop.yaml");
  EXPECT_TRUE(m.ok()) << m.status();
  return std::make_shared<const workloads::Matrix>(*std::move(m));
}

// A runner that answers each assignment from a script: run ids it fails, run ids after
// which it sets `cancel`; the others succeed with iops = 1000 x run id and one sample.
struct ScriptedRunner {
  std::vector<uint64_t> fail;
  uint64_t cancel_after = 0;
  std::atomic<bool>* cancel = nullptr;
  std::vector<uint64_t> ran;
  std::vector<bool> traced;

  LocalRunner Runner() {
    LocalRunner r;
    r.place = [](const v1::CellSpec& cell, uint64_t) { return cell.target().device_class(); };
    r.execute = [this](const v1::RunAssignment& a,
                       const std::function<void(const v1::Sample&)>& on_sample,
                       std::ostream* trace) {
      ran.push_back(a.run_id());
      traced.push_back(trace != nullptr);
      if (trace != nullptr) *trace << "event of run " << a.run_id() << "\n";
      v1::RunFinished f;
      f.set_run_id(a.run_id());
      f.set_attempt(a.attempt());
      if (cancel != nullptr && a.run_id() == cancel_after) cancel->store(true);
      if (std::find(fail.begin(), fail.end(), a.run_id()) != fail.end()) {
        f.set_outcome(v1::RUN_OUTCOME_FAILED);
        f.set_error("the device said no");
        return f;
      }
      v1::Sample s;
      s.set_seq(1);
      s.mutable_io()->set_read_ios(5);
      on_sample(s);
      f.set_outcome(v1::RUN_OUTCOME_SUCCEEDED);
      f.mutable_result()->set_duration_ns(10'000'000);
      f.mutable_result()->mutable_io()->set_read_ios(10);
      f.mutable_result()->set_iops(1000.0 * static_cast<double>(a.run_id()));
      return f;
    };
    r.extra_tables = [](const v1::GetResultsResponse& results, std::ostream& out) {
      out << "extra table of " << results.rows_size() << " rows\n";
    };
    return r;
  }
};

TEST(LocalRunTest, EveryRunSucceedsProgressOnStderrResultsOnStdout) {
  ScriptedRunner script;
  std::ostringstream out, err;
  v1::GetResultsResponse seen;
  const int rc =
      RunLocalExperiment({.command = "sim",
                          .path = "loop.yaml",
                          .matrix = ThreeCells(),
                          .on_results = [&seen](const v1::GetResultsResponse& r) { seen = r; }},
                         script.Runner(), nullptr, out, err);
  EXPECT_EQ(rc, 0) << err.str();
  EXPECT_EQ(script.ran, (std::vector<uint64_t>{1, 2, 3}));
  EXPECT_THAT(err.str(), HasSubstr("[1/3] "));
  EXPECT_THAT(err.str(), HasSubstr("[3/3] "));
  EXPECT_THAT(err.str(), HasSubstr("3.0k IOPS"));
  EXPECT_THAT(out.str(), Not(HasSubstr("[1/3]")));
  EXPECT_THAT(out.str(), HasSubstr("extra table of 3 rows"));  // table format only
  ASSERT_EQ(seen.rows_size(), 3);
  EXPECT_EQ(seen.experiment().state(), v1::EXPERIMENT_DONE);
  EXPECT_EQ(seen.rows(1).samples_size(), 1);
  EXPECT_EQ(seen.rows(2).run().result().iops(), 3000);
}

TEST(LocalRunTest, QuietKeepsErrorsAndAFailedRunFailsTheCommand) {
  ScriptedRunner script;
  script.fail = {2};
  std::ostringstream out, err;
  const int rc = RunLocalExperiment({.command = "run",
                                     .path = "loop.yaml",
                                     .format = "json",
                                     .quiet = true,
                                     .matrix = ThreeCells()},
                                    script.Runner(), nullptr, out, err);
  EXPECT_EQ(rc, 1);
  EXPECT_EQ(script.ran.size(), 3u);  // the others still run
  EXPECT_THAT(err.str(), HasSubstr("blkbench run: run 2 ("));
  EXPECT_THAT(err.str(), HasSubstr("failed: the device said no"));
  EXPECT_THAT(err.str(), Not(HasSubstr("[1/3]")));
  EXPECT_THAT(out.str(), Not(HasSubstr("extra table")));
  EXPECT_THAT(out.str(), HasSubstr("\"state\": \"failed\""));
}

TEST(LocalRunTest, ACancelStopsTheRestWithoutRunningThem) {
  std::atomic<bool> cancel{false};
  ScriptedRunner script;
  script.cancel = &cancel;
  script.cancel_after = 1;
  std::ostringstream out, err;
  v1::GetResultsResponse seen;
  const int rc =
      RunLocalExperiment({.command = "run",
                          .path = "loop.yaml",
                          .matrix = ThreeCells(),
                          .on_results = [&seen](const v1::GetResultsResponse& r) { seen = r; }},
                         script.Runner(), &cancel, out, err);
  EXPECT_EQ(rc, 1);
  EXPECT_EQ(script.ran, (std::vector<uint64_t>{1}));
  EXPECT_THAT(err.str(), HasSubstr("blkbench run: interrupted: 2 of 3 runs canceled"));
  ASSERT_EQ(seen.rows_size(), 3);
  EXPECT_EQ(seen.rows(0).run().state(), v1::RUN_DONE);
  EXPECT_EQ(seen.rows(2).run().state(), v1::RUN_CANCELED);
  EXPECT_EQ(seen.rows(2).run().error(), "canceled before it started");
  EXPECT_EQ(seen.experiment().state(), v1::EXPERIMENT_CANCELED);
}

TEST(LocalRunTest, StoresTracesAndReportsTheExperiment) {
  testing::TempDir dir("local_run_test");
  const std::string db = dir.File("l.db"), trace = dir.File("t.txt"), report = dir.File("r.html");
  ScriptedRunner script;
  std::ostringstream out, err;
  ASSERT_EQ(RunLocalExperiment({.command = "sim",
                                .path = "loop.yaml",
                                .db_path = db,
                                .trace_path = trace,
                                .report_path = report,
                                .matrix = ThreeCells(),
                                .matrix_text = "name: loop\n"},
                               script.Runner(), nullptr, out, err),
            0)
      << err.str();
  EXPECT_EQ(script.traced, (std::vector<bool>{true, true, true}));
  EXPECT_THAT(err.str(), HasSubstr(absl::StrCat("stored as experiment 1 in ", db)));
  EXPECT_THAT(err.str(), HasSubstr(absl::StrCat("report: ", report)));
  std::ifstream t(trace);
  std::stringstream text;
  text << t.rdbuf();
  EXPECT_THAT(text.str(), HasSubstr("# run 3 "));
  EXPECT_THAT(text.str(), HasSubstr("event of run 3\n"));
  EXPECT_TRUE(std::ifstream(report).good());
  auto store = OpenStore(db);
  ASSERT_TRUE(store.ok());
  auto exp = (*store)->GetExperiment(1, true);
  ASSERT_TRUE(exp.ok());
  EXPECT_EQ(exp->state(), v1::EXPERIMENT_DONE);
  EXPECT_EQ(exp->runs(0).result().iops(), 1000);
}

TEST(LocalRunTest, AnUnwritableTraceStopsBeforeAnyRun) {
  testing::TempDir dir("local_run_test");
  ScriptedRunner script;
  std::ostringstream out, err;
  EXPECT_EQ(
      RunLocalExperiment(
          {.command = "sim", .path = "loop.yaml", .trace_path = dir.path(), .matrix = ThreeCells()},
          script.Runner(), nullptr, out, err),
      1);
  EXPECT_TRUE(script.ran.empty());
  EXPECT_EQ(err.str(), absl::StrCat("blkbench sim: cannot write '", dir.path(), "'\n"));
  EXPECT_EQ(out.str(), "");
}

TEST(LocalRunTest, AnUnwritableReportFailsTheCommandAfterTheRuns) {
  testing::TempDir dir("local_run_test");
  ScriptedRunner script;
  std::ostringstream out, err;
  EXPECT_EQ(RunLocalExperiment({.command = "sim",
                                .path = "loop.yaml",
                                .report_path = dir.path(),
                                .matrix = ThreeCells()},
                               script.Runner(), nullptr, out, err),
            1);
  EXPECT_EQ(script.ran.size(), 3u);
  EXPECT_THAT(err.str(), HasSubstr("blkbench sim: cannot write '" + dir.path() + "'"));
}

}  // namespace
}  // namespace blkbench
