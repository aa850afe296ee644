// LocalSession: the daemon-less experiment of sim and run through the controller's
// lifecycle rules, with and without a store; the shared options read from a command
// line; the --trace sink.
#include "cli/local_session.h"

#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "agent/run_executor.h"
#include "cli/command_registry.h"
#include "cli/commands.h"
#include "cli/run_cmd.h"
#include "common/testing/loop_device.h"
#include "controller/store/store_factory.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "workloads/matrix.h"

namespace blkbench {
namespace {

using ::testing::HasSubstr;

std::shared_ptr<const workloads::Matrix> TwoCellsTwoRepeats() {
  auto m = workloads::ParseMatrix(
      "name: s\nrepeats: 2\njob: {rw: randread, bs: 4k, runtime: 10ms, time_based: 1}\n"
      "matrix:\n  iodepth: [1, 8]\ntarget: {device_class: sim:null_blk}\n",
      "s.yaml");
  EXPECT_TRUE(m.ok()) << m.status();
  return std::make_shared<const workloads::Matrix>(*std::move(m));
}

// A result that did I/O in measured time.
v1::RunResult Measured(double iops) {
  v1::RunResult r;
  r.set_duration_ns(1'000'000);
  r.mutable_io()->set_read_ios(10);
  r.set_iops(iops);
  return r;
}

v1::RunFinished Outcome(const v1::RunAssignment& a, v1::RunOutcome outcome,
                        const std::string& error = "") {
  v1::RunFinished f;
  f.set_run_id(a.run_id());
  f.set_attempt(a.attempt());
  f.set_outcome(outcome);
  f.set_error(error);
  return f;
}

// Place, start and end run `i` with `f`'s outcome (the assignment's ids filled in).
const v1::Run& RunTo(LocalSession& s, int i, v1::RunFinished f) {
  s.Place(i, "sim:null_blk");
  s.Begin(i);
  const v1::RunAssignment a = s.AssignmentOf(i);
  f.set_run_id(a.run_id());
  f.set_attempt(a.attempt());
  return s.Finish(i, f);
}

v1::RunFinished Succeeded(double iops) {
  v1::RunFinished f;
  f.set_outcome(v1::RUN_OUTCOME_SUCCEEDED);
  *f.mutable_result() = Measured(iops);
  return f;
}

TEST(SessionOptionsTest, SimFlagsLandInOneStruct) {
  auto args = ParseCommandLine({"sim", "m.yaml", "--db", "x.db", "--trace", "t.txt", "--format",
                                "json", "--report", "r.html", "--logs", "logs", "-q"},
                               Commands());
  ASSERT_TRUE(args.ok()) << args.status();
  args->matrix = TwoCellsTwoRepeats();
  args->matrix_text = "text";
  const SessionOptions o = SessionOptionsFromArgs(*args, "sim", "");
  EXPECT_EQ(o.command, "sim");
  EXPECT_EQ(o.path, "m.yaml");
  EXPECT_EQ(o.db_path, "x.db");
  EXPECT_EQ(o.trace_path, "t.txt");
  EXPECT_EQ(o.format, "json");
  EXPECT_EQ(o.report_path, "r.html");
  EXPECT_EQ(o.logs_dir, "logs");
  EXPECT_TRUE(o.quiet);
  EXPECT_EQ(o.matrix, args->matrix);
  EXPECT_EQ(o.matrix_text, "text");
  // Without the flags: the defaults, and the command's own default store.
  auto bare = ParseCommandLine({"sim", "m.yaml"}, Commands());
  ASSERT_TRUE(bare.ok());
  const SessionOptions d = SessionOptionsFromArgs(*bare, "sim", "");
  EXPECT_EQ(d.db_path, "");
  EXPECT_EQ(d.trace_path, "");
  EXPECT_EQ(d.format, "table");
  EXPECT_EQ(d.logs_dir, "");
  EXPECT_FALSE(d.quiet);
  EXPECT_EQ(SessionOptionsFromArgs(*bare, "run", kDefaultRunDb).db_path, kDefaultRunDb);
}

TEST(SessionOptionsTest, RunTakesRepeatedDevicesInOrderAndItsGuests) {
  auto args = ParseCommandLine({"run", "m.yaml", "--device", "/dev/b", "--device", "/dev/a=ssd",
                                "--state-dir", "/tmp/s", "--trace", "t"},
                               Commands());
  ASSERT_TRUE(args.ok()) << args.status();
  const RunOptions o = RunOptionsFromArgs(*args);
  EXPECT_EQ(o.devices, (std::vector<std::string>{"/dev/b", "/dev/a=ssd"}));
  EXPECT_EQ(o.state_dir, "/tmp/s");
  EXPECT_EQ(o.session.command, "run");
  EXPECT_EQ(o.session.db_path, kDefaultRunDb);
  EXPECT_EQ(o.session.trace_path, "t");
  EXPECT_FALSE(o.vm.any());
  auto vm = ParseCommandLine({"run", "m.yaml", "--vm", "null_blk", "--vm", "nvme:size=1g",
                              "--kernel", "deb:6.1*", "--vcpus", "4", "--memory", "1g"},
                             Commands());
  ASSERT_TRUE(vm.ok()) << vm.status();
  const RunOptions g = RunOptionsFromArgs(*vm);
  EXPECT_EQ(g.vm.vms, (std::vector<std::string>{"null_blk", "nvme:size=1g"}));
  EXPECT_EQ(g.vm.kernels, (std::vector<std::string>{"deb:6.1*"}));
  EXPECT_EQ(g.vm.vcpus, "4");
  EXPECT_EQ(g.vm.memory, "1g");
  EXPECT_EQ(g.state_dir, kDefaultRunStateDir);
}

TEST(LocalSessionTest, WithoutAStoreRunsAreNumberedAsAStoreNumbersThem) {
  FakeClock clock;
  auto s = LocalSession::Start({.path = "s.yaml", .matrix = TwoCellsTwoRepeats()}, clock);
  ASSERT_TRUE(s.ok()) << s.status();
  ASSERT_EQ((*s)->size(), 4);
  EXPECT_EQ((*s)->experiment_id(), 0u);
  for (int i = 0; i < 4; ++i) EXPECT_EQ((*s)->run(i).id(), static_cast<uint64_t>(i + 1));
  // RunOrder: every cell once per repeat, repeat by repeat.
  EXPECT_EQ((*s)->run(0).repeat(), (*s)->run(1).repeat());
  EXPECT_NE((*s)->run(0).cell_index(), (*s)->run(1).cell_index());
  EXPECT_NE((*s)->run(0).repeat(), (*s)->run(2).repeat());
}

TEST(LocalSessionTest, AssignmentIsWhatTheControllerWouldSend) {
  FakeClock clock;
  auto s = LocalSession::Start({.path = "s.yaml", .matrix = TwoCellsTwoRepeats()}, clock);
  ASSERT_TRUE(s.ok());
  (*s)->Place(1, "sim:null_blk");
  const v1::RunAssignment a = (*s)->AssignmentOf(1);
  EXPECT_EQ(a.run_id(), 2u);
  EXPECT_EQ(a.attempt(), 1u);
  EXPECT_EQ(a.device_path(), "sim:null_blk");
  EXPECT_EQ(a.cell().index(), (*s)->run(1).cell_index());
  EXPECT_EQ(a.sample_interval_ms(), 1000u);
  EXPECT_EQ((*s)->run(1).agent_id(), "local");
}

TEST(LocalSessionTest, RunsEndByTheControllersRule) {
  FakeClock clock;
  auto started = LocalSession::Start({.path = "s.yaml", .matrix = TwoCellsTwoRepeats()}, clock);
  ASSERT_TRUE(started.ok());
  LocalSession& s = **started;
  const v1::Run& done = RunTo(s, 0, Succeeded(1234));
  EXPECT_EQ(done.state(), v1::RUN_DONE);
  EXPECT_EQ(done.result().iops(), 1234);
  EXPECT_GT(done.started_unix_ms(), 0);
  // A success without I/O in measured time is no measurement: failed, as on a controller.
  v1::RunFinished empty;
  empty.set_outcome(v1::RUN_OUTCOME_SUCCEEDED);
  empty.mutable_result()->set_duration_ns(1'000'000);
  const v1::Run& no_io = RunTo(s, 1, empty);
  EXPECT_EQ(no_io.state(), v1::RUN_FAILED);
  EXPECT_FALSE(no_io.error().empty());
  EXPECT_FALSE(no_io.has_result());
  const v1::Run& failed = RunTo(s, 2, Outcome({}, v1::RUN_OUTCOME_FAILED, "device gone"));
  EXPECT_EQ(failed.state(), v1::RUN_FAILED);
  EXPECT_EQ(failed.error(), "device gone");
  RunTo(s, 3, Succeeded(1));
  EXPECT_EQ(s.failed(), 2);
  EXPECT_EQ(s.canceled(), 0);
  const v1::GetResultsResponse r = s.End();
  EXPECT_EQ(r.experiment().state(), v1::EXPERIMENT_FAILED);
  EXPECT_EQ(r.experiment().error(), "2 of 4 runs failed");
  ASSERT_EQ(r.rows_size(), 4);
  EXPECT_EQ(r.rows(2).run().error(), "device gone");
  EXPECT_EQ(r.rows(0).cell().index(), s.run(0).cell_index());
}

TEST(LocalSessionTest, ACanceledRunEndsTheExperimentCanceled) {
  FakeClock clock;
  auto started = LocalSession::Start({.path = "s.yaml", .matrix = TwoCellsTwoRepeats()}, clock);
  ASSERT_TRUE(started.ok());
  LocalSession& s = **started;
  RunTo(s, 0, Succeeded(5));
  for (int i = 1; i < 4; ++i) {
    s.Place(i, "sim:null_blk");
    const v1::Run& r =
        s.Finish(i, RunFinishedOf(s.AssignmentOf(i), absl::CancelledError("not started")));
    EXPECT_EQ(r.state(), v1::RUN_CANCELED);
    EXPECT_EQ(r.started_unix_ms(), 0);
  }
  EXPECT_EQ(s.canceled(), 3);
  EXPECT_EQ(s.End().experiment().state(), v1::EXPERIMENT_CANCELED);
}

TEST(LocalSessionTest, AllDoneIsDoneAndTheReportGetsTheMatrixText) {
  FakeClock clock;
  auto started = LocalSession::Start(
      {.path = "s.yaml", .matrix = TwoCellsTwoRepeats(), .matrix_text = "name: s\n"}, clock);
  ASSERT_TRUE(started.ok());
  for (int i = 0; i < 4; ++i) RunTo(**started, i, Succeeded(10 + i));
  const v1::GetResultsResponse r = (*started)->End();
  EXPECT_EQ(r.experiment().state(), v1::EXPERIMENT_DONE);
  EXPECT_EQ(r.experiment().error(), "");
  EXPECT_EQ(r.experiment().matrix_text(), "name: s\n");
  EXPECT_EQ(r.experiment().name(), "s");
  EXPECT_EQ(r.experiment().file_name(), "s.yaml");
  EXPECT_EQ(r.experiment().runs_size(), 0);  // the runs are the rows
}

TEST(LocalSessionTest, WithAStoreEveryStepIsStoredAsTheControllerStoresIt) {
  testing::TempDir dir("local_session_test");
  const std::string db = dir.File("s.db");
  FakeClock clock;
  auto started =
      LocalSession::Start({.path = "s.yaml", .db_path = db, .matrix = TwoCellsTwoRepeats()}, clock);
  ASSERT_TRUE(started.ok()) << started.status();
  LocalSession& s = **started;
  EXPECT_EQ(s.experiment_id(), 1u);
  ASSERT_EQ(s.size(), 4);
  {
    auto store = OpenStore(db);
    ASSERT_TRUE(store.ok());
    auto exp = (*store)->GetExperiment(1, false);
    ASSERT_TRUE(exp.ok());
    EXPECT_EQ(exp->state(), v1::EXPERIMENT_QUEUED);
    for (int i = 0; i < 4; ++i) EXPECT_EQ(exp->runs(i).id(), s.run(i).id());
  }
  s.Place(0, "sim:null_blk");
  s.Begin(0);
  v1::Sample sample;
  sample.set_seq(1);
  sample.mutable_io()->set_read_ios(3);
  s.AddSample(0, sample);
  {
    auto store = OpenStore(db);
    ASSERT_TRUE(store.ok());
    auto run = (*store)->GetRun(s.run(0).id());
    ASSERT_TRUE(run.ok());
    EXPECT_EQ(run->state(), v1::RUN_RUNNING);
    EXPECT_EQ(run->agent_id(), "local");
  }
  v1::RunFinished f = Succeeded(7);
  f.set_run_id(s.run(0).id());
  f.set_attempt(1);
  s.Finish(0, f);
  for (int i = 1; i < 4; ++i) RunTo(s, i, Outcome({}, v1::RUN_OUTCOME_FAILED, "broken"));
  const v1::GetResultsResponse r = s.End();
  EXPECT_TRUE(s.store_error().ok()) << s.store_error();
  EXPECT_EQ(r.experiment().id(), 1u);
  ASSERT_EQ(r.rows(0).samples_size(), 1);
  EXPECT_EQ(r.rows(0).samples(0).io().read_ios(), 3u);
  auto store = OpenStore(db);
  ASSERT_TRUE(store.ok());
  auto exp = (*store)->GetExperiment(1, true);
  ASSERT_TRUE(exp.ok());
  EXPECT_EQ(exp->state(), v1::EXPERIMENT_FAILED);
  EXPECT_EQ(exp->error(), "3 of 4 runs failed");
  EXPECT_EQ(exp->runs(0).state(), v1::RUN_DONE);
  EXPECT_EQ(exp->runs(0).result().iops(), 7);
  EXPECT_EQ(exp->runs(1).error(), "broken");
  auto samples = (*store)->ListSamples(s.run(0).id());
  ASSERT_TRUE(samples.ok());
  EXPECT_EQ(samples->size(), 1u);
}

TEST(LocalSessionTest, AStoreThatCannotOpenStopsTheSessionBeforeAnyRun) {
  testing::TempDir dir("local_session_test");
  FakeClock clock;
  auto s = LocalSession::Start(
      {.path = "s.yaml", .db_path = dir.File("missing/dir/s.db"), .matrix = TwoCellsTwoRepeats()},
      clock);
  EXPECT_FALSE(s.ok());
}

TEST(TraceSinkTest, EachRunsSectionStartsWithItsHeader) {
  FakeClock clock;
  testing::TempDir dir("local_session_test");
  const std::string path = dir.File("trace.txt");
  auto started = LocalSession::Start(
      {.path = "s.yaml", .trace_path = path, .matrix = TwoCellsTwoRepeats()}, clock);
  ASSERT_TRUE(started.ok()) << started.status();
  LocalSession& s = **started;
  s.Place(0, "sim:null_blk");
  std::ostream* trace = s.Begin(0);
  ASSERT_NE(trace, nullptr);
  *trace << "8,0 event\n";
  s.Place(1, "sim:null_blk");
  ASSERT_EQ(s.Begin(1), trace);  // one sink for the experiment
  started->reset();              // closes the file
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_THAT(text.str(), ::testing::StartsWith("# run 1 "));
  EXPECT_THAT(text.str(), HasSubstr("\n8,0 event\n# run 2 "));
}

TEST(TraceSinkTest, WithoutTraceRunsGetNoStreamAndAnUnwritablePathIsAnError) {
  FakeClock clock;
  auto off = LocalSession::Start({.path = "s.yaml", .matrix = TwoCellsTwoRepeats()}, clock);
  ASSERT_TRUE(off.ok());
  (*off)->Place(0, "sim:null_blk");
  EXPECT_EQ((*off)->Begin(0), nullptr);
  testing::TempDir dir("local_session_test");
  auto bad = LocalSession::Start(
      {.path = "s.yaml", .trace_path = dir.path(), .matrix = TwoCellsTwoRepeats()}, clock);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("cannot write '" + dir.path() + "'"));
}

TEST(TraceSinkTest, OverAStreamWritesTheHeaderThenHandsItOut) {
  std::ostringstream out;
  TraceSink sink(out);
  v1::Run run;
  run.set_id(9);
  run.set_repeat(2);
  v1::CellSpec cell;
  EXPECT_EQ(sink.BeginRun(run, cell), &out);
  EXPECT_THAT(out.str(), ::testing::StartsWith("# run 9 "));
  EXPECT_THAT(out.str(), ::testing::EndsWith(" rep 2\n"));
}

}  // namespace
}  // namespace blkbench
