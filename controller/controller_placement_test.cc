// Controller placement over its in-memory queue: what a pass reads from the store (no
// queued run when nothing is placeable), id order across restarts, re-queues and
// cancels, and added repeats of an experiment that ended canceled.
#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "controller/controller.h"
#include "controller/controller_test_util.h"
#include "controller/store/store_wrapper.h"
#include "gtest/gtest.h"

namespace blkbench {
namespace {

// Counts the store's run reads: a full read of the queue (ListRunsInStates) and reads
// of one run (GetRun) or one experiment with all its runs (GetExperiment).
class CountingStore final : public StoreWrapper {
 public:
  using StoreWrapper::StoreWrapper;
  absl::StatusOr<std::vector<v1::Run>> ListRunsInStates(
      const std::vector<v1::RunState>& states) override {
    ++list_runs;
    return StoreWrapper::ListRunsInStates(states);
  }
  absl::StatusOr<v1::Run> GetRun(uint64_t run_id) override {
    ++get_run;
    return StoreWrapper::GetRun(run_id);
  }
  absl::StatusOr<v1::Experiment> GetExperiment(uint64_t id, bool with_results) override {
    ++get_experiment;
    return StoreWrapper::GetExperiment(id, with_results);
  }
  void Reset() {
    list_runs = 0;
    get_run = 0;
    get_experiment = 0;
  }
  std::atomic<int> list_runs{0};
  std::atomic<int> get_run{0};
  std::atomic<int> get_experiment{0};
};

class ControllerPlacementTest : public ControllerTest {
 protected:
  // A controller on counting_ (over the fixture's SQLite store), started.
  void UseCountingStore() {
    controller_.reset();
    counting_ = std::make_unique<CountingStore>(*store_);
    controller_ = std::make_unique<Controller>(*counting_, clock_, options_);
    ASSERT_TRUE(controller_->Start().ok());
  }
  std::vector<uint64_t> AssignedIds(const std::shared_ptr<FakeLink>& link) {
    std::vector<uint64_t> ids;
    for (const v1::RunAssignment& a : FakeLink::Assignments(link->Take()))
      ids.push_back(a.run_id());
    return ids;
  }
  void TearDown() override {
    controller_.reset();
    counting_.reset();
    ControllerTest::TearDown();
  }
  std::unique_ptr<CountingStore> counting_;
};

TEST_F(ControllerPlacementTest, APassWithNothingPlaceableReadsNoRunFromTheStore) {
  UseCountingStore();
  EXPECT_EQ(counting_->list_runs.load(), 1) << "Start reads the queue once";
  ASSERT_TRUE(controller_->Submit("m.yaml", kMatrix).ok());  // 4 runs for "ssd"
  counting_->Reset();
  // Free devices that match nothing: an agent registering is a pass, ticks are not.
  auto hdd = std::make_shared<FakeLink>();
  ASSERT_TRUE(controller_->OnRegister(Reg("h1", {"/dev/a", "/dev/b"}, "hdd"), hdd).ok());
  for (int i = 0; i < 20; ++i) {
    clock_.AdvanceMs(500);
    controller_->Tick();
  }
  auto other = std::make_shared<FakeLink>();
  ASSERT_TRUE(controller_->OnRegister(Reg("h3", {"/dev/a"}, "hdd"), other).ok());
  EXPECT_EQ(counting_->list_runs.load(), 0);
  EXPECT_EQ(counting_->get_run.load(), 0);
  EXPECT_EQ(counting_->get_experiment.load(), 0);
  EXPECT_TRUE(FakeLink::Assignments(other->Take()).empty());

  // A matching device: one run read (and written) for the one run placed.
  auto ssd = std::make_shared<FakeLink>();
  ASSERT_TRUE(controller_->OnRegister(Reg("s1", {"/dev/x"}), ssd).ok());
  EXPECT_EQ(AssignedIds(ssd).size(), 1u);
  EXPECT_EQ(counting_->get_run.load(), 1);
  EXPECT_EQ(counting_->list_runs.load(), 0);
}

// Many free devices and a small experiment: one read of the experiment instead of one
// per run placed, in the same order.
TEST_F(ControllerPlacementTest, APassPlacingMuchOfAnExperimentReadsItOnce) {
  UseCountingStore();
  std::string m = kMatrix;
  m.replace(m.find("repeats: 2"), 10, "repeats: 10");  // 20 runs
  auto exp = controller_->Submit("m.yaml", m);
  ASSERT_TRUE(exp.ok()) << exp.status();
  std::vector<std::string> paths;
  paths.reserve(24);
  for (int i = 0; i < 24; ++i) paths.push_back("/dev/d" + std::to_string(100 + i));
  counting_->Reset();
  auto link = std::make_shared<FakeLink>();
  ASSERT_TRUE(controller_->OnRegister(Reg("a1", paths), link).ok());
  std::vector<uint64_t> want;
  want.reserve(exp->runs_size());
  for (const v1::Run& run : exp->runs()) want.push_back(run.id());
  EXPECT_EQ(AssignedIds(link), want);
  EXPECT_EQ(counting_->get_run.load(), 0);
  EXPECT_EQ(counting_->get_experiment.load(), 1);
  EXPECT_EQ(counting_->list_runs.load(), 0);
}

TEST_F(ControllerPlacementTest, SubmitAnswersWithTheRunsItPlaced) {
  auto link = std::make_shared<FakeLink>();
  ASSERT_TRUE(controller_->OnRegister(Reg("a1", {"/dev/x"}), link).ok());
  auto exp = controller_->Submit("m.yaml", kMatrix);
  ASSERT_TRUE(exp.ok()) << exp.status();
  ASSERT_EQ(exp->runs_size(), 4);
  EXPECT_EQ(exp->state(), v1::EXPERIMENT_RUNNING);
  EXPECT_EQ(exp->runs(0).state(), v1::RUN_ASSIGNED);
  EXPECT_EQ(exp->runs(0).agent_id(), "a1");
  EXPECT_EQ(exp->runs(1).state(), v1::RUN_QUEUED);
  auto stored = controller_->GetExperiment(exp->id(), false);
  ASSERT_TRUE(stored.ok());
  EXPECT_EQ(stored->runs(0).lease_id(), exp->runs(0).lease_id());
  EXPECT_EQ(AssignedIds(link), (std::vector<uint64_t>{exp->runs(0).id()}));
}

TEST_F(ControllerPlacementTest, QueuedRunsAreReloadedAtStartAndPlacedInIdOrder) {
  auto first = controller_->Submit("m.yaml", kMatrix);
  auto second = controller_->Submit("m.yaml", kMatrix);
  ASSERT_TRUE(first.ok() && second.ok());
  ASSERT_TRUE(controller_->Cancel(first->id()).ok());
  Reopen();
  auto link = std::make_shared<FakeLink>();
  ASSERT_TRUE(controller_->OnRegister(Reg("a1", {"/dev/x", "/dev/y", "/dev/z"}), link).ok());
  std::vector<uint64_t> want;
  want.reserve(3);
  for (int i = 0; i < 3; ++i) want.push_back(second->runs(i).id());
  EXPECT_EQ(AssignedIds(link), want);
}

TEST_F(ControllerPlacementTest, ARequeuedRunGoesBeforeLaterRuns) {
  auto exp = controller_->Submit("m.yaml", kMatrix);
  ASSERT_TRUE(exp.ok());
  auto a1 = std::make_shared<FakeLink>();
  ASSERT_TRUE(controller_->OnRegister(Reg("a1", {"/dev/x"}), a1).ok());
  const std::vector<v1::RunAssignment> got = FakeLink::Assignments(a1->Take());
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].run_id(), exp->runs(0).id());
  // a1 goes silent past the TTL: its run is queued again, ahead of runs 2..4, and placed
  // once a1 is heard from again.
  clock_.AdvanceMs(options_.lease_ttl_ms + 1);
  controller_->Tick();
  EXPECT_TRUE(FakeLink::Assignments(a1->Take()).empty());
  controller_->OnHeartbeat("a1", HeartbeatOf({}, 1));
  const std::vector<v1::RunAssignment> again = FakeLink::Assignments(a1->Take());
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0].run_id(), exp->runs(0).id());
  EXPECT_EQ(again[0].attempt(), 2u);
}

TEST_F(ControllerPlacementTest, ACanceledExperimentsRunsLeaveTheQueue) {
  auto first = controller_->Submit("m.yaml", kMatrix);
  auto second = controller_->Submit("m.yaml", kMatrix);
  ASSERT_TRUE(first.ok() && second.ok());
  ASSERT_TRUE(controller_->Cancel(first->id()).ok());
  auto link = std::make_shared<FakeLink>();
  ASSERT_TRUE(controller_->OnRegister(Reg("a1", {"/dev/x", "/dev/y"}), link).ok());
  EXPECT_EQ(AssignedIds(link), (std::vector<uint64_t>{second->runs(0).id(), second->runs(1).id()}));
}

TEST_F(ControllerPlacementTest, AddedRepeatsAreQueuedAndAnEndedCanceledExperimentTakesNone) {
  auto exp = controller_->Submit("m.yaml", kMatrix);
  ASSERT_TRUE(exp.ok());
  auto added = controller_->AddRepeats(exp->id(), {1}, 2);
  ASSERT_TRUE(added.ok()) << added.status();
  ASSERT_EQ(added->run_ids_size(), 2);
  auto link = std::make_shared<FakeLink>();
  ASSERT_TRUE(controller_->OnRegister(Reg("a1", {"/a", "/b", "/c", "/d", "/e", "/f"}), link).ok());
  const std::vector<v1::RunAssignment> got = FakeLink::Assignments(link->Take());
  ASSERT_EQ(got.size(), 6u);
  EXPECT_EQ(got[4].run_id(), added->run_ids(0));
  EXPECT_EQ(got[4].repeat(), 2u);  // cell 1 had repeats 0 and 1
  EXPECT_EQ(got[5].run_id(), added->run_ids(1));
  EXPECT_EQ(got[5].repeat(), 3u);

  // Canceled, and ended once its runs are stopped: more repeats are refused, before and
  // after a restart, though the controller no longer remembers the cancel itself.
  ASSERT_TRUE(controller_->Cancel(exp->id()).ok());
  for (const v1::RunAssignment& a : got) {
    v1::RunFinished f = Done(a);
    f.set_outcome(v1::RUN_OUTCOME_CANCELED);
    f.clear_result();
    controller_->OnFinished("a1", f);
  }
  ASSERT_EQ(controller_->GetExperiment(exp->id(), false)->state(), v1::EXPERIMENT_CANCELED);
  auto refused = controller_->AddRepeats(exp->id(), {0}, 1);
  EXPECT_TRUE(absl::IsFailedPrecondition(refused.status())) << refused.status();
  Reopen();
  refused = controller_->AddRepeats(exp->id(), {0}, 1);
  EXPECT_TRUE(absl::IsFailedPrecondition(refused.status())) << refused.status();
  EXPECT_EQ(controller_->GetExperiment(exp->id(), false)->state(), v1::EXPERIMENT_CANCELED);
}

}  // namespace
}  // namespace blkbench
