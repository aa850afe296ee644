// Tests for Controller: placement, leases, acknowledgements, cancel and restart, on a
// real SQLite store with a fake clock and fake agent links.
#include "controller/controller.h"

#include "controller/controller_test_util.h"
#include "controller/store/store_wrapper.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace blkbench {
namespace {

using ::testing::HasSubstr;

TEST_F(ControllerTest, SubmitCreatesRunsAndPlacesOnePerDevice) {
  auto exp = controller_->Submit("m.yaml", kMatrix);
  ASSERT_TRUE(exp.ok()) << exp.status();
  EXPECT_EQ(exp->runs_size(), 4);
  auto link = std::make_shared<FakeLink>();
  ASSERT_TRUE(controller_->OnRegister(Reg("a1", {"/dev/x", "/dev/y"}), link).ok());
  auto msgs = link->Take();
  ASSERT_FALSE(msgs.empty());
  EXPECT_TRUE(msgs[0].has_registered());
  auto assigned = FakeLink::Assignments(msgs);
  ASSERT_EQ(assigned.size(), 2u);  // two devices, one run each
  EXPECT_NE(assigned[0].device_path(), assigned[1].device_path());
  EXPECT_EQ(assigned[0].attempt(), 1u);
  EXPECT_EQ(assigned[0].cell().target().device_class(), "ssd");
  auto got = controller_->GetExperiment(exp->id(), false);
  EXPECT_EQ(got->state(), v1::EXPERIMENT_RUNNING);
}

TEST_F(ControllerTest, BadMatrixIsRejectedAndNothingStored) {
  auto exp =
      controller_->Submit("bad.yaml", "name: x\njob: {iodepth: 0}\ntarget: {device_class: ssd}\n");
  ASSERT_FALSE(exp.ok());
  EXPECT_TRUE(absl::IsInvalidArgument(exp.status()));
  EXPECT_THAT(std::string(exp.status().message()), HasSubstr("bad.yaml:2"));
  EXPECT_TRUE(controller_->ListExperiments(0)->empty());
}

TEST_F(ControllerTest, KernelGlobAndClassMustMatch) {
  std::string m = kMatrix;
  m.replace(m.find("{device_class: ssd}"), 19, "{device_class: ssd, kernel: \"6.10*\"}");
  ASSERT_TRUE(controller_->Submit("m.yaml", m).ok());
  auto old_kernel = std::make_shared<FakeLink>();
  ASSERT_TRUE(controller_->OnRegister(Reg("old", {"/dev/x"}), old_kernel).ok());
  auto hdd = std::make_shared<FakeLink>();
  ASSERT_TRUE(controller_->OnRegister(Reg("hdd", {"/dev/x"}, "hdd", "6.10.3"), hdd).ok());
  EXPECT_TRUE(FakeLink::Assignments(old_kernel->Take()).empty());
  EXPECT_TRUE(FakeLink::Assignments(hdd->Take()).empty());
  auto good = std::make_shared<FakeLink>();
  ASSERT_TRUE(controller_->OnRegister(Reg("new", {"/dev/x"}, "ssd", "6.10.3"), good).ok());
  EXPECT_EQ(FakeLink::Assignments(good->Take()).size(), 1u);
}

// The bug this guards: while the disk was full nothing was acked, but the ack of the
// next stored sample (acks are cumulative) made the agent drop the unstored ones. Acks
// now cover only the contiguous stored prefix, and a store failure says "retry later".
TEST_F(ControllerTest, AStoreFailureIsNeverAcknowledgedPastAndTheResendFillsTheHole) {
  FaultyStore faulty(*store_);
  controller_.reset();
  options_.store_retry_ms = 250;
  controller_ = std::make_unique<Controller>(faulty, clock_, options_);
  ASSERT_TRUE(controller_->Start().ok());
  auto link = std::make_shared<FakeLink>();
  const v1::RunAssignment a = SubmitAndAssign(link);
  auto sample = [&](uint64_t seq) {
    controller_->OnSample("a1", SampleOf(a, seq));
    std::vector<v1::ControllerMessage> sent = link->Take();
    EXPECT_EQ(sent.size(), 1u);
    return sent.empty() ? v1::Ack() : sent.back().ack();
  };
  EXPECT_EQ(sample(1).sample_seq(), 1u);
  faulty.SetFailing(true);  // the disk fills
  v1::Ack refused = sample(2);
  EXPECT_EQ(refused.sample_seq(), 1u);
  EXPECT_EQ(refused.retry_after_ms(), 250u);
  EXPECT_TRUE(refused.error().empty());  // not a rejection: the run goes on
  faulty.SetFailing(false);              // space again
  v1::Ack after_hole = sample(3);
  EXPECT_EQ(after_hole.sample_seq(), 1u) << "acked past sample 2, which is not stored";
  EXPECT_EQ(after_hole.retry_after_ms(), 0u);
  EXPECT_EQ(sample(2).sample_seq(), 3u);  // the resend fills the hole
  EXPECT_EQ(store_->ListSamples(a.run_id())->size(), 3u);

  // A result that cannot be stored is not acknowledged either, and is taken on resend.
  faulty.SetFailing(true);
  controller_->OnFinished("a1", Done(a, 1234));
  std::vector<v1::ControllerMessage> no = link->Take();
  ASSERT_EQ(no.size(), 1u);
  EXPECT_FALSE(no[0].ack().finished());
  EXPECT_EQ(no[0].ack().retry_after_ms(), 250u);
  EXPECT_EQ(store_->GetRun(a.run_id())->state(), v1::RUN_RUNNING);
  faulty.SetFailing(false);
  controller_->OnFinished("a1", Done(a, 1234));
  EXPECT_TRUE(link->Take().at(0).ack().finished());
  EXPECT_EQ(store_->GetRun(a.run_id())->state(), v1::RUN_DONE);
}

// A result arriving before all its samples (some were refused and are being resent) is
// not taken: a finished run never has holes in its samples.
TEST_F(ControllerTest, AResultIsTakenOnlyWhenEverySampleBeforeItIsStored) {
  auto link = std::make_shared<FakeLink>();
  const v1::RunAssignment a = SubmitAndAssign(link);
  controller_->OnSample("a1", SampleOf(a, 1));
  link->Take();
  v1::RunFinished fin = Done(a);
  fin.set_last_sample_seq(2);  // sample 2 has not arrived
  controller_->OnFinished("a1", fin);
  std::vector<v1::ControllerMessage> early = link->Take();
  ASSERT_EQ(early.size(), 1u);
  EXPECT_FALSE(early[0].ack().finished());
  EXPECT_GT(early[0].ack().retry_after_ms(), 0u);
  EXPECT_EQ(early[0].ack().sample_seq(), 1u);
  EXPECT_EQ(store_->GetRun(a.run_id())->state(), v1::RUN_RUNNING);
  controller_->OnSample("a1", SampleOf(a, 2));
  link->Take();
  controller_->OnFinished("a1", fin);
  EXPECT_TRUE(link->Take().at(0).ack().finished());
  EXPECT_EQ(store_->GetRun(a.run_id())->state(), v1::RUN_DONE);
}

// A controller restarted mid-run learns the stored prefix from the store: the agent's
// resend of its unacknowledged samples is acknowledged through the last stored one.
TEST_F(ControllerTest, AfterARestartAcksContinueFromWhatIsStored) {
  auto link = std::make_shared<FakeLink>();
  const v1::RunAssignment a = SubmitAndAssign(link);
  for (uint64_t seq : {1, 2}) controller_->OnSample("a1", SampleOf(a, seq));
  controller_.reset();  // the acks of 1 and 2 are lost with it
  controller_ = std::make_unique<Controller>(*store_, clock_, options_);
  ASSERT_TRUE(controller_->Start().ok());
  link = std::make_shared<FakeLink>();
  v1::Register reg = Reg("a1", {"/dev/x"});
  v1::ActiveRun* ar = reg.add_active_runs();
  ar->set_run_id(a.run_id());
  ar->set_attempt(a.attempt());
  ar->set_lease_id(a.lease_id());
  ASSERT_TRUE(controller_->OnRegister(reg, link).ok());
  link->Take();
  // The resend after reconnect starts past the stored ones.
  controller_->OnSample("a1", SampleOf(a, 3));
  EXPECT_EQ(link->Take().at(0).ack().sample_seq(), 3u);
}

TEST_F(ControllerTest, SamplesAckedResultsStoredOnceAndNextRunPlaced) {
  auto exp = controller_->Submit("m.yaml", kMatrix);
  auto link = std::make_shared<FakeLink>();
  ASSERT_TRUE(controller_->OnRegister(Reg("a1", {"/dev/x"}), link).ok());
  auto a = FakeLink::Assignments(link->Take()).at(0);

  v1::RunSample rs;
  rs.set_run_id(a.run_id());
  rs.set_attempt(a.attempt());
  rs.set_lease_id(a.lease_id());
  rs.mutable_sample()->set_seq(1);
  rs.mutable_sample()->set_interval_ns(1'000'000'000);
  controller_->OnSample("a1", rs);
  controller_->OnSample("a1", rs);  // resent after a lost ack: stored once
  auto acks = link->Take();
  ASSERT_EQ(acks.size(), 2u);
  EXPECT_EQ(acks[0].ack().sample_seq(), 1u);
  EXPECT_TRUE(acks[0].ack().error().empty());
  EXPECT_EQ(store_->ListSamples(a.run_id())->size(), 1u);
  EXPECT_EQ(store_->GetRun(a.run_id())->state(), v1::RUN_RUNNING);

  controller_->OnFinished("a1", Done(a, 1234));
  auto after = link->Take();
  ASSERT_GE(after.size(), 2u);
  EXPECT_TRUE(after[0].ack().finished());
  EXPECT_EQ(FakeLink::Assignments(after).size(), 1u);  // the device is free again
  controller_->OnFinished("a1", Done(a, 999));         // duplicate: acked, not re-stored
  EXPECT_TRUE(link->Take().at(0).ack().finished());
  auto run = controller_->GetExperiment(exp->id(), true)->runs(0);
  EXPECT_EQ(run.state(), v1::RUN_DONE);
  EXPECT_EQ(run.result().iops(), 1234);
}

// A run that measured time but completed no I/O is failed, not stored as 0 IOPS; the
// total across named jobs counts, so one idle job among busy ones is fine.
TEST_F(ControllerTest, ARunThatCompletedNoIoIsFailedNotDone) {
  auto exp = controller_->Submit("m.yaml", kMatrix);
  auto link = std::make_shared<FakeLink>();
  ASSERT_TRUE(controller_->OnRegister(Reg("a1", {"/dev/x"}), link).ok());
  auto a = FakeLink::Assignments(link->Take()).at(0);
  v1::RunFinished idle = Done(a, 0);
  idle.mutable_result()->set_duration_ns(2'000'000'000);
  controller_->OnFinished("a1", idle);
  auto after = link->Take();
  ASSERT_GE(after.size(), 1u);
  EXPECT_TRUE(after[0].ack().finished());
  absl::StatusOr<v1::Experiment> stored = controller_->GetExperiment(exp->id(), true);
  ASSERT_TRUE(stored.ok()) << stored.status();
  for (const v1::Run& run : stored->runs()) {
    if (run.id() != a.run_id()) continue;
    EXPECT_EQ(run.state(), v1::RUN_FAILED);
    EXPECT_EQ(run.error().rfind("no I/O completed in 2 s", 0), 0u) << run.error();
    EXPECT_FALSE(run.has_result());
  }

  auto b = FakeLink::Assignments(after).at(0);  // the device is free again
  v1::RunFinished busy = Done(b, 100);
  busy.mutable_result()->set_duration_ns(2'000'000'000);
  busy.mutable_result()->mutable_io()->set_write_ios(200);
  busy.mutable_result()->add_jobs()->set_name("idle");  // no I/O of its own
  controller_->OnFinished("a1", busy);
  EXPECT_EQ(store_->GetRun(b.run_id())->state(), v1::RUN_DONE);
}

TEST_F(ControllerTest, StaleLeaseIsRejected) {
  ASSERT_TRUE(controller_->Submit("m.yaml", kMatrix).ok());
  auto link = std::make_shared<FakeLink>();
  ASSERT_TRUE(controller_->OnRegister(Reg("a1", {"/dev/x"}), link).ok());
  auto a = FakeLink::Assignments(link->Take()).at(0);
  v1::RunFinished f = Done(a);
  f.set_lease_id("not-the-lease");
  controller_->OnFinished("a1", f);
  auto msgs = link->Take();
  ASSERT_EQ(msgs.size(), 1u);
  EXPECT_THAT(msgs[0].ack().error(), HasSubstr("stale lease"));
  EXPECT_EQ(store_->GetRun(a.run_id())->state(), v1::RUN_ASSIGNED);
}

TEST_F(ControllerTest, ExpiredLeaseRequeuesThenFailsAfterMaxAttempts) {
  ASSERT_TRUE(controller_->Submit("m.yaml", kMatrix).ok());
  auto link = std::make_shared<FakeLink>();
  ASSERT_TRUE(controller_->OnRegister(Reg("a1", {"/dev/x"}), link).ok());
  auto a = FakeLink::Assignments(link->Take()).at(0);
  controller_->OnDisconnect("a1", link.get());

  clock_.AdvanceMs(options_.lease_ttl_ms - 1);
  controller_->Tick();
  EXPECT_EQ(store_->GetRun(a.run_id())->state(), v1::RUN_ASSIGNED);  // not before TTL
  clock_.AdvanceMs(1);
  controller_->Tick();
  auto run = store_->GetRun(a.run_id());
  EXPECT_EQ(run->state(), v1::RUN_QUEUED);
  EXPECT_THAT(run->error(), HasSubstr("lease expired"));

  // A result from the old lease is refused once the agent is back.
  auto link2 = std::make_shared<FakeLink>();
  ASSERT_TRUE(controller_->OnRegister(Reg("a1", {"/dev/x"}), link2).ok());
  auto a2 = FakeLink::Assignments(link2->Take()).at(0);
  EXPECT_EQ(a2.run_id(), a.run_id());
  EXPECT_EQ(a2.attempt(), 2u);
  controller_->OnFinished("a1", Done(a));
  EXPECT_THAT(link2->Take().at(0).ack().error(), HasSubstr("stale"));

  controller_->OnDisconnect("a1", link2.get());
  clock_.AdvanceMs(options_.lease_ttl_ms);
  controller_->Tick();
  run = store_->GetRun(a.run_id());
  EXPECT_EQ(run->state(), v1::RUN_FAILED);
  EXPECT_THAT(run->error(), HasSubstr("attempt 2 of 2"));
}

TEST_F(ControllerTest, HeartbeatKeepsLeaseAlive) {
  ASSERT_TRUE(controller_->Submit("m.yaml", kMatrix).ok());
  auto link = std::make_shared<FakeLink>();
  ASSERT_TRUE(controller_->OnRegister(Reg("a1", {"/dev/x"}), link).ok());
  auto a = FakeLink::Assignments(link->Take()).at(0);
  v1::Heartbeat hb;
  auto* ar = hb.add_active_runs();
  ar->set_run_id(a.run_id());
  ar->set_attempt(a.attempt());
  ar->set_lease_id(a.lease_id());
  for (int i = 0; i < 10; ++i) {
    clock_.AdvanceMs(options_.lease_ttl_ms / 2);
    controller_->OnHeartbeat("a1", hb);
    controller_->Tick();
  }
  EXPECT_EQ(store_->GetRun(a.run_id())->state(), v1::RUN_ASSIGNED);
}

TEST_F(ControllerTest, RestartKeepsLeasesForReconnectingAgents) {
  ASSERT_TRUE(controller_->Submit("m.yaml", kMatrix).ok());
  auto link = std::make_shared<FakeLink>();
  ASSERT_TRUE(controller_->OnRegister(Reg("a1", {"/dev/x"}), link).ok());
  auto a = FakeLink::Assignments(link->Take()).at(0);

  Reopen();  // controller restart on the same database
  clock_.AdvanceMs(options_.lease_ttl_ms - 1);
  controller_->Tick();
  EXPECT_EQ(store_->GetRun(a.run_id())->state(), v1::RUN_ASSIGNED);  // a full TTL to return
  v1::Register reg = Reg("a1", {"/dev/x"});
  auto* ar = reg.add_active_runs();
  ar->set_run_id(a.run_id());
  ar->set_attempt(a.attempt());
  ar->set_lease_id(a.lease_id());
  auto link2 = std::make_shared<FakeLink>();
  ASSERT_TRUE(controller_->OnRegister(reg, link2).ok());
  EXPECT_TRUE(FakeLink::Assignments(link2->Take()).empty());  // device still leased
  controller_->OnFinished("a1", Done(a, 77));
  EXPECT_EQ(store_->GetRun(a.run_id())->state(), v1::RUN_DONE);
}

TEST_F(ControllerTest, AgentRestartWithoutRunRequeuesAtOnce) {
  ASSERT_TRUE(controller_->Submit("m.yaml", kMatrix).ok());
  auto link = std::make_shared<FakeLink>();
  ASSERT_TRUE(controller_->OnRegister(Reg("a1", {"/dev/x"}), link).ok());
  auto a = FakeLink::Assignments(link->Take()).at(0);
  controller_->OnHeartbeat("a1", HeartbeatOf({a}, 1));  // the agent confirms it has it
  auto link2 = std::make_shared<FakeLink>();
  ASSERT_TRUE(controller_->OnRegister(Reg("a1", {"/dev/x"}), link2).ok());
  auto again = FakeLink::Assignments(link2->Take());
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0].attempt(), 2u);
}

TEST_F(ControllerTest, CancelStopsQueuedAndAsksAgentsToStop) {
  auto exp = controller_->Submit("m.yaml", kMatrix);
  auto link = std::make_shared<FakeLink>();
  ASSERT_TRUE(controller_->OnRegister(Reg("a1", {"/dev/x"}), link).ok());
  auto a = FakeLink::Assignments(link->Take()).at(0);
  ASSERT_TRUE(controller_->Cancel(exp->id()).ok());
  auto msgs = link->Take();
  ASSERT_EQ(msgs.size(), 1u);
  EXPECT_EQ(msgs[0].cancel().run_id(), a.run_id());
  EXPECT_EQ(controller_->GetExperiment(exp->id(), false)->state(), v1::EXPERIMENT_RUNNING);
  v1::RunFinished f = Done(a);
  f.set_outcome(v1::RUN_OUTCOME_CANCELED);
  controller_->OnFinished("a1", f);
  auto e = controller_->GetExperiment(exp->id(), false);
  EXPECT_EQ(e->state(), v1::EXPERIMENT_CANCELED);
  for (const auto& r : e->runs()) EXPECT_EQ(r.state(), v1::RUN_CANCELED);
  EXPECT_TRUE(FakeLink::Assignments(link->Take()).empty());
  EXPECT_FALSE(controller_->Cancel(exp->id()).ok());
}

TEST_F(ControllerTest, ExperimentDoneWhenAllRunsDone) {
  auto exp = controller_->Submit("m.yaml", kMatrix);
  auto link = std::make_shared<FakeLink>();
  ASSERT_TRUE(controller_->OnRegister(Reg("a1", {"/dev/x"}), link).ok());
  for (int i = 0; i < 4; ++i) {
    auto as = FakeLink::Assignments(link->Take());
    ASSERT_EQ(as.size(), 1u) << "run " << i;
    controller_->OnFinished("a1", Done(as[0]));
  }
  auto e = controller_->GetExperiment(exp->id(), true);
  EXPECT_EQ(e->state(), v1::EXPERIMENT_DONE);
  EXPECT_GT(e->finished_unix_ms(), 0);
}

}  // namespace
}  // namespace blkbench
