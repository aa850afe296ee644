// `blkbench bisect`: the search on synthetic results (a planted change found in at most
// ceil(log2 n) + 1 steps, the same kernel at both ends is no regression, a midpoint like
// neither end is inconclusive after the allowed rounds with the bracket said), then the
// command end to end on the engine: sim kernels where one patch flag in the middle of
// the list moves IOPS, the LKP-style summary, and a second run that reuses every step.
#include "cli/bisect.h"

#include <sys/stat.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cli/cli.h"
#include "common/testing/loop_device.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace blkbench {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

// One cell on kernel `value`, `repeats` done runs of IOPS around `iops` (±0.5 %, the
// same spread every time: deterministic).
v1::GetResultsResponse Results(const std::string& value, double iops, int repeats,
                               uint64_t* next_run) {
  v1::GetResultsResponse r;
  v1::CellSpec cell;
  cell.mutable_target()->set_device_class("sim:null_blk");
  cell.mutable_target()->set_kernel(value);
  v1::AxisValue* a = cell.add_axes();
  a->set_key(kBisectAxis);
  a->set_value(value);
  a = cell.add_axes();
  a->set_key("scheduler");
  a->set_value("none");
  *r.mutable_experiment()->add_cells() = cell;
  r.mutable_experiment()->set_id(*next_run);
  for (int i = 0; i < repeats; ++i) {
    v1::ResultRow* row = r.add_rows();
    *row->mutable_cell() = cell;
    row->mutable_run()->set_id((*next_run)++);
    row->mutable_run()->set_repeat(static_cast<uint32_t>(i));
    row->mutable_run()->set_state(v1::RUN_DONE);
    row->mutable_run()->mutable_result()->set_iops(iops * (1.0 + 0.005 * std::sin(i + 1.0)));
  }
  return r;
}

std::vector<std::string> Names(int n) {
  std::vector<std::string> k;
  k.reserve(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) k.push_back(absl::StrCat("k", i));
  return k;
}

struct Fake {
  std::vector<double> iops;  // per kernel index
  std::vector<int> measured;
  uint64_t next = 1;
  BisectMeasure measure(const std::vector<std::string>& names) {
    return [this, names](size_t i, int round) -> absl::StatusOr<v1::GetResultsResponse> {
      measured.push_back(static_cast<int>(i));
      return Results(names[i], iops[i], 3 + round, &next);
    };
  }
};

TEST(BisectTest, APlantedRegressionIsFoundInLog2Steps) {
  for (int n : {3, 8, 12, 16}) {
    for (int first_bad = 1; first_bad < n; ++first_bad) {
      Fake f;
      for (int i = 0; i < n; ++i) f.iops.push_back(i < first_bad ? 100000 : 90000);
      BisectOptions o;
      o.kernels = Names(n);
      absl::StatusOr<BisectOutcome> out = Bisect(o, f.measure(o.kernels));
      ASSERT_TRUE(out.ok()) << out.status();
      ASSERT_EQ(out->verdict, BisectVerdict::kCulprit) << n << " " << first_bad << "\n"
                                                       << RenderBisectText(*out);
      EXPECT_EQ(out->first_bad, static_cast<size_t>(first_bad));
      EXPECT_EQ(out->last_good, static_cast<size_t>(first_bad - 1));
      EXPECT_LE(out->measured_steps, static_cast<int>(std::ceil(std::log2(n))) + 1);
      EXPECT_EQ(BisectExitStatus(*out), 0);
      ASSERT_EQ(out->change.size(), 1u);
      EXPECT_NEAR(out->change[0].vs_good.relative_change, -0.10, 0.01);
    }
  }
}

TEST(BisectTest, TheSummaryNamesMetricChangeAndBothKernels) {
  Fake f;
  f.iops = {100000, 100000, 100000, 90000, 90000};
  BisectOptions o;
  o.kernels = {"sim:6.10", "sim:6.11", "sim:6.12", "sim:6.13", "sim:6.14"};
  absl::StatusOr<BisectOutcome> out = Bisect(o, f.measure(o.kernels));
  ASSERT_TRUE(out.ok()) << out.status();
  const std::string text = RenderBisectText(*out);
  EXPECT_THAT(text, HasSubstr("first bad kernel found"));
  EXPECT_THAT(text, HasSubstr("regression of iops ["));
  EXPECT_THAT(text, HasSubstr("first bad kernel: sim:6.13"));
  EXPECT_THAT(text, HasSubstr("last good kernel: sim:6.12"));
  EXPECT_THAT(text, HasSubstr("good end"));
  EXPECT_THAT(text, HasSubstr("bad end"));
  EXPECT_THAT(RenderBisectMarkdown(*out), HasSubstr("| kernel | role |"));
  const std::string json = RenderBisectJson(*out);
  EXPECT_THAT(json, HasSubstr("\"first_bad\": \"sim:6.13\""));
  EXPECT_THAT(json, HasSubstr("\"verdict\": \"culprit\""));
}

TEST(BisectTest, EndsAlikeAreNoRegressionWithoutAnyStep) {
  Fake f;
  f.iops = {100000, 50000, 100000};
  BisectOptions o;
  o.kernels = Names(3);
  absl::StatusOr<BisectOutcome> out = Bisect(o, f.measure(o.kernels));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->verdict, BisectVerdict::kNoRegression) << RenderBisectText(*out);
  EXPECT_EQ(BisectExitStatus(*out), 1);
  EXPECT_EQ(out->measured_steps, 0);
  EXPECT_THAT(f.measured, ElementsAre(0, 2));  // the middle never ran
  EXPECT_THAT(RenderBisectText(*out), HasSubstr("no regression between the ends"));
}

TEST(BisectTest, AMidpointWithinMinEffectOfGoodIsGood) {
  Fake f;
  f.iops = {100000, 100000, 99000, 90000, 90000};  // k2 1 % below good: within min_effect
  BisectOptions o;
  o.kernels = Names(5);
  o.gate.min_effect = 0.02;
  absl::StatusOr<BisectOutcome> out = Bisect(o, f.measure(o.kernels));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->verdict, BisectVerdict::kCulprit) << RenderBisectText(*out);
  EXPECT_EQ(out->first_bad, 3u);
}

TEST(BisectTest, AStepThatStaysUndecidedIsInconclusiveWithTheBracket) {
  // The midpoint's runs are too few to decide anything (1 repeat < min_repeats) however
  // often it is repeated: after max_rounds the bisect says so and where the change is.
  uint64_t next = 1;
  std::vector<int> rounds_of_k2;
  const std::vector<std::string> names = Names(5);
  BisectMeasure m = [&](size_t i, int round) -> absl::StatusOr<v1::GetResultsResponse> {
    if (i == 2) {
      rounds_of_k2.push_back(round);
      return Results(names[i], 95000, 1, &next);
    }
    return Results(names[i], i < 2 ? 100000 : 90000, 3, &next);
  };
  BisectOptions o;
  o.kernels = names;
  o.max_rounds = 2;
  absl::StatusOr<BisectOutcome> out = Bisect(o, m);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->verdict, BisectVerdict::kInconclusive) << RenderBisectText(*out);
  EXPECT_EQ(BisectExitStatus(*out), 2);
  EXPECT_THAT(rounds_of_k2, ElementsAre(0, 1));
  EXPECT_EQ(out->last_good, 0u);
  EXPECT_EQ(out->first_bad, 4u);
  EXPECT_THAT(RenderBisectText(*out), HasSubstr("first bad kernel: one of k1 .. k4"));
}

TEST(BisectTest, BadArgumentsAndAFailedStepAreErrors) {
  Fake f;
  f.iops = {1, 1};
  BisectOptions o;
  o.kernels = {"a"};
  EXPECT_FALSE(Bisect(o, f.measure({"a"})).ok());
  o.kernels = {"a", "a"};
  EXPECT_THAT(Bisect(o, f.measure({"a", "a"})).status().message(), HasSubstr("listed twice"));
  o.kernels = {"a", "b"};
  o.metric = "speed";
  EXPECT_FALSE(Bisect(o, f.measure({"a", "b"})).ok());
  o.metric = "iops";
  absl::StatusOr<BisectOutcome> out =
      Bisect(o, [](size_t, int) -> absl::StatusOr<v1::GetResultsResponse> {
        return absl::AbortedError("the runs on b did not all succeed");
      });
  EXPECT_THAT(out.status().message(), HasSubstr("did not all succeed"));
}

// The command on the engine: seed 000's mq-deadline cell (16 jobs on a 128-core profile,
// where dd->lock is contended) over ten sim kernels; dd-batch-dispatch, which seed 000
// measured as a large IOPS gain, is in the first six and gone from the seventh on.
class BisectCmdTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::ofstream(matrix_) << "name: bisect-test\nrepeats: 3\n"
                              "job: {rw: randwrite, bs: 4k, direct: 1, ioengine: io_uring, "
                              "iodepth: 32, numjobs: 16, iodepth_batch_submit: 8, "
                              "iodepth_batch_complete: 8, runtime: 10ms, time_based: 1}\n"
                              "matrix: {scheduler: [mq-deadline]}\n"
                              "target: {device_class: \"sim:null_blk\", machine: "
                              "server-128-4node}\n"
                              "device:\n  null_blk: {submit_queues: 128, hw_queue_depth: 1024, "
                              "irqmode: 0, completion_nsec: 0, blocksize: 512}\n";
    for (int i = 0; i < 10; ++i) {
      kernels_.push_back(absl::StrCat("sim:6.", 7 + i, i < 6 ? "+dd-batch-dispatch" : ""));
    }
  }
  int Cli(const std::vector<std::string>& args) {
    std::ostringstream o, e;
    const int rc = RunCli(args, o, e);
    out_ = o.str();
    err_ = e.str();
    return rc;
  }

  testing::TempDir dir_{"bisect_test"};
  std::string matrix_ = dir_.File("m.yaml");
  std::vector<std::string> kernels_;
  std::string out_, err_;
};

TEST_F(BisectCmdTest, NamesThePlantedKernelThenReusesEveryStep) {
  const std::string db = dir_.File("b.db");
  const std::string list = absl::StrJoin(kernels_, ",");
  ASSERT_EQ(
      Cli({"bisect", matrix_, "--kernels", list, "--db", db, "-q", "--json", dir_.File("b.json")}),
      0)
      << out_ << err_;
  EXPECT_THAT(out_, HasSubstr("first bad kernel: sim:6.13\n"));
  EXPECT_THAT(out_, HasSubstr("last good kernel: sim:6.12+dd-batch-dispatch\n"));
  EXPECT_THAT(out_, HasSubstr("regression of iops"));
  std::ifstream json(dir_.File("b.json"));
  const std::string j((std::istreambuf_iterator<char>(json)), std::istreambuf_iterator<char>());
  EXPECT_THAT(j, HasSubstr("\"first_bad\": \"sim:6.13\""));

  // Again on the same store: every step is reused, nothing runs, the same answer.
  const std::string first = out_;
  ASSERT_EQ(Cli({"bisect", matrix_, "--kernels", list, "--db", db, "-q"}), 0) << err_;
  EXPECT_EQ(out_, first);
  EXPECT_THAT(err_, HasSubstr("(reused)"));
  EXPECT_THAT(err_, Not(HasSubstr("on the engine")));
}

TEST_F(BisectCmdTest, TheSameKernelAtBothEndsIsNoRegression) {
  // bfq-batch-dispatch changes only bfq: on mq-deadline the two ends run alike.
  ASSERT_EQ(Cli({"bisect", matrix_, "--kernels", "sim:6.16,sim:6.16+bfq-batch-dispatch", "--db",
                 dir_.File("same.db"), "-q"}),
            1)
      << out_ << err_;
  EXPECT_THAT(out_, HasSubstr("no regression between the ends"));
}

TEST_F(BisectCmdTest, BadFlagsAreRefusedBeforeAnythingRuns) {
  EXPECT_EQ(Cli({"bisect", matrix_, "--kernels", "sim:6.16"}), 3);
  EXPECT_THAT(err_, HasSubstr("at least two kernels"));
  EXPECT_EQ(Cli({"bisect", matrix_, "--kernels", "sim:6.16,deb:6.1*"}), 3);
  EXPECT_THAT(err_, HasSubstr("every kernel is a sim: kernel"));
  EXPECT_EQ(Cli({"bisect", matrix_, "--kernels", "sim:6.16,sim:6.17", "--metric", "speed"}), 3);
  EXPECT_THAT(err_, HasSubstr("--metric"));
  EXPECT_EQ(Cli({"bisect", matrix_}), 3);
  EXPECT_THAT(err_, HasSubstr("give either --kernels"));
  EXPECT_EQ(Cli({"bisect", matrix_, "--git", "/nonexistent", "--good", "a"}), 3);
  EXPECT_THAT(err_, HasSubstr("--git needs --bad"));
}

TEST_F(BisectCmdTest, GitRevisionsThroughABuildHook) {
  // A tree of ten commits; the hook maps each revision to a sim kernel, as a site's hook
  // maps it to the image it built. Commit 7 (index 6) drops the batch dispatch.
  const std::string repo = dir_.File("repo");
  const std::string hook = dir_.File("hook.sh");
  std::string script = "set -e\nmkdir -p " + repo + " && cd " + repo +
                       " && git init -q && git config user.email t@t && git config user.name t\n"
                       "for i in 0 1 2 3 4 5 6 7 8 9; do echo $i > f; git add f; "
                       "git commit -qm c$i; done\n";
  ASSERT_EQ(system(("bash -c '" + script + "' >/dev/null 2>&1").c_str()), 0);
  std::ofstream(hook) << "#!/bin/sh\n# prints the kernel revision $1 builds\n"
                         "n=$(git show \"$1\":f)\n"
                         "echo building $1 >&2\n"
                         "if [ \"$n\" -lt 6 ]; then echo sim:6.$((7 + n))+dd-batch-dispatch; "
                         "else echo sim:6.$((7 + n)); fi\n";
  ASSERT_EQ(chmod(hook.c_str(), 0755), 0);
  ASSERT_EQ(Cli({"bisect", matrix_, "--git", repo, "--good", "HEAD~9", "--bad", "HEAD", "--build",
                 hook, "--db", dir_.File("git.db"), "-q"}),
            0)
      << out_ << err_;
  EXPECT_THAT(err_, HasSubstr("10 revisions from"));
  EXPECT_THAT(err_, HasSubstr("built sim:6.13"));
  std::string rev6;
  {
    // The 7th commit's hash, from git itself.
    FILE* p = popen(("git -C " + repo + " rev-parse HEAD~3").c_str(), "r");
    char buf[64] = {};
    ASSERT_NE(p, nullptr);
    ASSERT_NE(fgets(buf, sizeof buf, p), nullptr);
    pclose(p);
    rev6 = std::string(buf).substr(0, 12);
  }
  EXPECT_THAT(out_, HasSubstr("first bad kernel: " + rev6));
}

}  // namespace
}  // namespace blkbench
