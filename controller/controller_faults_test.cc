// Controller under faults: assignments confirmed per (run, attempt) and re-sent when
// unconfirmed, lease renewal answered for the agent's fencing clock, self-fenced runs
// re-queued, duplicate agent ids refused, and store failures that never leave state
// half-changed (FaultyStore fails every write, as a full disk does).
#include <string>
#include <vector>

#include "common/log/log.h"
#include "controller/controller_test_util.h"
#include "controller/store/store_wrapper.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace blkbench {
namespace {

using ::testing::HasSubstr;

class CaptureLog : public LogSink {
 public:
  CaptureLog() { previous_ = SetLogSink(this); }
  ~CaptureLog() override { SetLogSink(previous_); }
  void Write(LogLevel, absl::string_view line) override { lines_.emplace_back(line); }
  // Lines of `event`.
  std::vector<std::string> Events(const std::string& event) const {
    std::vector<std::string> out;
    for (const std::string& l : lines_) {
      if (LogField(l, "event") == event) out.push_back(l);
    }
    return out;
  }

 private:
  LogSink* previous_;
  std::vector<std::string> lines_;  // written under the log's own lock
};

class ControllerFaultsTest : public ControllerTest {
 protected:
  // Replaces the controller with one on a FaultyStore over the same database.
  void UseFaultyStore() {
    controller_.reset();
    faulty_ = std::make_unique<FaultyStore>(*store_);
    controller_ = std::make_unique<Controller>(*faulty_, clock_, options_);
    ASSERT_TRUE(controller_->Start().ok());
  }
  static std::vector<v1::Renewed> RenewedOf(const std::vector<v1::ControllerMessage>& msgs) {
    std::vector<v1::Renewed> out;
    for (const auto& m : msgs) {
      if (m.has_renewed()) out.push_back(m.renewed());
    }
    return out;
  }
  v1::Register RegWithInstance(const std::string& id, const std::string& instance) {
    v1::Register r = Reg(id, {"/dev/x"});
    r.set_instance_id(instance);
    return r;
  }
  std::unique_ptr<FaultyStore> faulty_;
};

TEST_F(ControllerFaultsTest, HeartbeatIsAnsweredWithTheRunsItRenewed) {
  auto link = std::make_shared<FakeLink>();
  const v1::RunAssignment a = SubmitAndAssign(link);
  v1::RunAssignment stranger = a;
  stranger.set_run_id(a.run_id() + 100);  // not leased to this agent
  controller_->OnHeartbeat("a1", HeartbeatOf({a, stranger}, 7));
  std::vector<v1::Renewed> renewed = RenewedOf(link->Take());
  ASSERT_EQ(renewed.size(), 1u);
  EXPECT_EQ(renewed[0].seq(), 7u);
  ASSERT_EQ(renewed[0].runs_size(), 1);
  EXPECT_EQ(renewed[0].runs(0).run_id(), a.run_id());
  EXPECT_EQ(renewed[0].runs(0).attempt(), a.attempt());
}

TEST_F(ControllerFaultsTest, AnUnconfirmedAssignmentIsSentAgainWithTheSameAttempt) {
  auto link = std::make_shared<FakeLink>();
  const v1::RunAssignment a = SubmitAndAssign(link);
  // Not confirmed within two heartbeat intervals: sent again on the same stream.
  clock_.AdvanceMs(2 * options_.heartbeat_interval_ms - 1);
  controller_->Tick();
  EXPECT_TRUE(FakeLink::Assignments(link->Take()).empty());
  clock_.AdvanceMs(1);
  controller_->Tick();
  std::vector<v1::RunAssignment> again = FakeLink::Assignments(link->Take());
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0].run_id(), a.run_id());
  EXPECT_EQ(again[0].attempt(), a.attempt());

  // The stream broke before the agent confirmed: the reconnect gets it once more, with
  // the same attempt — a lost assignment costs no attempt.
  controller_->OnDisconnect("a1", link.get());
  auto link2 = std::make_shared<FakeLink>();
  ASSERT_TRUE(controller_->OnRegister(Reg("a1", {"/dev/x"}), link2).ok());
  again = FakeLink::Assignments(link2->Take());
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0].attempt(), a.attempt());
  EXPECT_EQ(store_->GetRun(a.run_id())->attempt(), a.attempt());

  // Confirmed: no more re-sends.
  controller_->OnHeartbeat("a1", HeartbeatOf({a}, 1));
  clock_.AdvanceMs(3 * options_.heartbeat_interval_ms);
  controller_->Tick();
  EXPECT_TRUE(FakeLink::Assignments(link2->Take()).empty());
}

TEST_F(ControllerFaultsTest, AFencedRunIsRequeuedWithoutItsSamplesAndRunsAgain) {
  auto link = std::make_shared<FakeLink>();
  const v1::RunAssignment a = SubmitAndAssign(link);
  controller_->OnSample("a1", SampleOf(a, 1));
  controller_->OnSample("a1", SampleOf(a, 2));
  EXPECT_EQ(store_->GetRun(a.run_id())->state(), v1::RUN_RUNNING);
  link->Take();
  v1::RunFinished fenced = Done(a);
  fenced.set_outcome(v1::RUN_OUTCOME_FENCED);
  fenced.set_error("no lease renewal confirmed for 20000 ms");
  fenced.set_last_sample_seq(2);
  controller_->OnFinished("a1", fenced);
  std::vector<v1::ControllerMessage> msgs = link->Take();
  bool acked = false;
  for (const auto& m : msgs) acked = acked || (m.has_ack() && m.ack().finished());
  EXPECT_TRUE(acked);  // the agent may forget the attempt
  std::vector<v1::RunAssignment> again = FakeLink::Assignments(msgs);
  ASSERT_EQ(again.size(), 1u);  // the device is free again: the run goes straight back
  EXPECT_EQ(again[0].run_id(), a.run_id());
  EXPECT_EQ(again[0].attempt(), a.attempt() + 1);
  EXPECT_TRUE(store_->ListSamples(a.run_id())->empty());  // attempt 1's samples are gone
  controller_->OnFinished("a1", Done(again[0], 4321));
  auto run = store_->GetRun(a.run_id());
  EXPECT_EQ(run->state(), v1::RUN_DONE);
  EXPECT_EQ(run->result().iops(), 4321);
}

// A controller stall longer than the TTL (SIGSTOP, a VM pause): every lease expires at
// once when it resumes. The run is re-issued as the next attempt once the agent is heard
// from (its heartbeats queued during the stall arrive at once), the agent (which fenced
// itself meanwhile) runs it, and it ends DONE — not FAILED.
TEST_F(ControllerFaultsTest, AStallLongerThanTheTtlCostsOneAttemptNotTheRun) {
  auto link = std::make_shared<FakeLink>();
  const v1::RunAssignment a = SubmitAndAssign(link);
  controller_->OnHeartbeat("a1", HeartbeatOf({a}, 1));
  link->Take();
  clock_.AdvanceMs(2 * options_.lease_ttl_ms);  // the stall
  controller_->Tick();
  EXPECT_TRUE(FakeLink::Assignments(link->Take()).empty()) << "not heard from since";
  controller_->OnHeartbeat("a1", HeartbeatOf({a}, 2));
  std::vector<v1::RunAssignment> again = FakeLink::Assignments(link->Take());
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0].attempt(), 2u);
  // Messages the agent sent during the stall arrive after it: stale, rejected.
  v1::RunFinished fenced = Done(a);
  fenced.set_outcome(v1::RUN_OUTCOME_FENCED);
  controller_->OnFinished("a1", fenced);
  EXPECT_THAT(link->Take().at(0).ack().error(), HasSubstr("stale"));
  controller_->OnHeartbeat("a1", HeartbeatOf({again[0]}, 3));
  controller_->OnFinished("a1", Done(again[0]));
  EXPECT_EQ(store_->GetRun(a.run_id())->state(), v1::RUN_DONE);
}

// A partition longer than the TTL: the lease expires while the agent's stream is still
// open (nothing says it broke). The run is not written into that stalled stream, where it
// would wait out a second TTL; it goes to an agent the controller hears from, and the
// silent one takes runs again once it is heard from.
TEST_F(ControllerFaultsTest, ARunWhoseAgentFellSilentGoesToAnAgentThatIsHeardFrom) {
  auto l1 = std::make_shared<FakeLink>();
  const v1::RunAssignment a = SubmitAndAssign(l1);  // a1 holds run a; the others queue
  auto l2 = std::make_shared<FakeLink>();
  ASSERT_TRUE(controller_->OnRegister(Reg("a2", {"/dev/y"}), l2).ok());
  std::vector<v1::RunAssignment> on_a2 = FakeLink::Assignments(l2->Take());
  ASSERT_EQ(on_a2.size(), 1u);
  // a2 keeps talking, a1 goes quiet for the TTL.
  clock_.AdvanceMs(options_.lease_ttl_ms / 2);
  controller_->OnHeartbeat("a2", HeartbeatOf(on_a2, 1));
  clock_.AdvanceMs(options_.lease_ttl_ms / 2);
  controller_->Tick();
  EXPECT_TRUE(FakeLink::Assignments(l1->Take()).empty()) << "a1 is silent";
  EXPECT_EQ(store_->GetRun(a.run_id())->state(), v1::RUN_QUEUED);
  // a2 finishes its run: its device takes the re-queued one (or another queued run).
  controller_->OnFinished("a2", Done(on_a2[0]));
  std::vector<v1::RunAssignment> next = FakeLink::Assignments(l2->Take());
  ASSERT_EQ(next.size(), 1u);
  EXPECT_TRUE(FakeLink::Assignments(l1->Take()).empty());
  // a1's partition heals: its heartbeat (listing the lost run, which it is told to drop)
  // makes it placeable again at once.
  controller_->OnHeartbeat("a1", HeartbeatOf({a}, 5));
  std::vector<v1::ControllerMessage> msgs = l1->Take();
  bool told_to_drop = false;
  for (const auto& m : msgs) told_to_drop = told_to_drop || m.has_cancel();
  EXPECT_TRUE(told_to_drop);
  EXPECT_EQ(FakeLink::Assignments(msgs).size(), 1u);
}

TEST_F(ControllerFaultsTest, ASecondAgentWithTheSameIdIsRefusedWhileTheFirstIsConnected) {
  CaptureLog log;
  ASSERT_TRUE(controller_->Submit("m.yaml", kMatrix).ok());
  auto first = std::make_shared<FakeLink>("ipv4:10.0.0.1:4000");
  ASSERT_TRUE(controller_->OnRegister(RegWithInstance("a1", "aaaa"), first).ok());
  const v1::RunAssignment a = FakeLink::Assignments(first->Take()).at(0);

  auto clone = std::make_shared<FakeLink>("ipv4:10.0.0.2:4000");
  absl::Status refused = controller_->OnRegister(RegWithInstance("a1", "bbbb"), clone);
  EXPECT_TRUE(absl::IsAlreadyExists(refused)) << refused;
  EXPECT_THAT(std::string(refused.message()), HasSubstr("10.0.0.1"));
  EXPECT_THAT(std::string(refused.message()), HasSubstr("agent_id"));
  EXPECT_TRUE(clone->Take().empty());  // the clone hears nothing, gets nothing
  ASSERT_EQ(log.Events("duplicate_agent_refused").size(), 1u);
  EXPECT_EQ(LogField(log.Events("duplicate_agent_refused")[0], "peer"), "ipv4:10.0.0.2:4000");
  // The first keeps its lease and stream.
  controller_->OnSample("a1", SampleOf(a, 1));
  EXPECT_EQ(first->Take().at(0).ack().sample_seq(), 1u);
  auto agents = controller_->ListAgents();
  ASSERT_EQ(agents->size(), 1u);
  EXPECT_TRUE((*agents)[0].connected());
  EXPECT_EQ((*agents)[0].refused_duplicates(), 1u);
  EXPECT_EQ((*agents)[0].last_refused_peer(), "ipv4:10.0.0.2:4000");

  // The same process reconnecting (same instance) replaces its own half-dead stream.
  auto again = std::make_shared<FakeLink>("ipv4:10.0.0.1:4001");
  EXPECT_TRUE(controller_->OnRegister(RegWithInstance("a1", "aaaa"), again).ok());
  // Once the holder's stream is gone, another process may take the id.
  controller_->OnDisconnect("a1", again.get());
  EXPECT_TRUE(controller_->OnRegister(RegWithInstance("a1", "bbbb"), clone).ok());
}

TEST_F(ControllerFaultsTest, RegistrationOnAFailingStoreIsUnavailableAndLogged) {
  CaptureLog log;
  UseFaultyStore();
  faulty_->SetFailing(true);
  auto link = std::make_shared<FakeLink>();
  absl::Status s = controller_->OnRegister(Reg("a1", {"/dev/x"}), link);
  EXPECT_TRUE(absl::IsUnavailable(s)) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr("could not be stored"));
  ASSERT_EQ(log.Events("register_store_failed").size(), 1u);
  EXPECT_THAT(LogField(log.Events("register_store_failed")[0], "error"), HasSubstr("full"));
  EXPECT_TRUE(link->Take().empty());
  faulty_->SetFailing(false);
  EXPECT_TRUE(controller_->OnRegister(Reg("a1", {"/dev/x"}), link).ok());
}

// LoseLease writes first: while the store fails the run stays leased (its device busy,
// nothing placed there) and the loss is retried on every tick until it is committed.
TEST_F(ControllerFaultsTest, ALeaseLostWhileTheStoreFailsIsRequeuedOnceItRecovers) {
  CaptureLog log;
  UseFaultyStore();
  auto link = std::make_shared<FakeLink>();
  const v1::RunAssignment a = SubmitAndAssign(link);
  faulty_->SetFailing(true);
  clock_.AdvanceMs(options_.lease_ttl_ms);
  controller_->Tick();
  EXPECT_EQ(store_->GetRun(a.run_id())->state(), v1::RUN_ASSIGNED);
  EXPECT_FALSE(log.Events("lease_loss_store_failed").empty());
  EXPECT_TRUE(FakeLink::Assignments(link->Take()).empty());
  // A heartbeat does not revive a lease that is being given up.
  controller_->OnHeartbeat("a1", HeartbeatOf({a}, 1));
  EXPECT_EQ(RenewedOf(link->Take()).at(0).runs_size(), 0);
  controller_->Tick();
  EXPECT_EQ(store_->GetRun(a.run_id())->state(), v1::RUN_ASSIGNED);

  faulty_->SetFailing(false);
  controller_->Tick();
  auto run = store_->GetRun(a.run_id());
  std::vector<v1::RunAssignment> again = FakeLink::Assignments(link->Take());
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0].run_id(), a.run_id());
  EXPECT_EQ(again[0].attempt(), 2u);
  EXPECT_EQ(run->attempt(), 2u);
  EXPECT_EQ(run->state(), v1::RUN_ASSIGNED);
}

TEST_F(ControllerFaultsTest, AnExperimentStateWriteThatFailedIsRetriedByTick) {
  UseFaultyStore();
  auto link = std::make_shared<FakeLink>();
  auto exp = controller_->Submit("m.yaml", kMatrix);
  ASSERT_TRUE(exp.ok());
  ASSERT_TRUE(controller_->OnRegister(Reg("a1", {"/dev/x"}), link).ok());
  for (int i = 0; i < 3; ++i) {
    controller_->OnFinished("a1", Done(FakeLink::Assignments(link->Take()).at(0)));
  }
  const v1::RunAssignment last = FakeLink::Assignments(link->Take()).at(0);
  faulty_->FailWritesAfter(1);  // the result is stored, the experiment's DONE is not
  controller_->OnFinished("a1", Done(last));
  EXPECT_EQ(store_->GetRun(last.run_id())->state(), v1::RUN_DONE);
  EXPECT_EQ(store_->GetExperiment(exp->id(), false)->state(), v1::EXPERIMENT_RUNNING);
  faulty_->SetFailing(false);
  controller_->Tick();
  EXPECT_EQ(store_->GetExperiment(exp->id(), false)->state(), v1::EXPERIMENT_DONE);
}

// Bytes of a dead connection delivered late (a stalled proxy flushing): that old
// registration must not replace the live stream of the same process.
TEST_F(ControllerFaultsTest, ARegistrationFromAnEarlierConnectionIsRefused) {
  auto live = std::make_shared<FakeLink>();
  v1::Register second = RegWithInstance("a1", "aaaa");
  second.set_connection(2);
  ASSERT_TRUE(controller_->OnRegister(second, live).ok());
  auto stale = std::make_shared<FakeLink>();
  v1::Register first = RegWithInstance("a1", "aaaa");
  first.set_connection(1);
  absl::Status s = controller_->OnRegister(first, stale);
  EXPECT_TRUE(absl::IsFailedPrecondition(s)) << s;
  controller_->OnDisconnect("a1", stale.get());  // the stale stream ends: no effect
  EXPECT_TRUE(controller_->ListAgents()->at(0).connected());
  ASSERT_TRUE(controller_->Submit("m.yaml", kMatrix).ok());
  EXPECT_EQ(FakeLink::Assignments(live->Take()).size(), 1u);  // the live stream gets work
}

// A different process registering the id (after the first one's stream dropped) must not
// make the first one's leases free at once: that process may still be writing until it
// fences itself. They run out their TTL.
TEST_F(ControllerFaultsTest, AnotherProcessTakingTheIdDoesNotFreeTheFirstOnesLeasesAtOnce) {
  auto first = std::make_shared<FakeLink>();
  ASSERT_TRUE(controller_->Submit("m.yaml", kMatrix).ok());
  ASSERT_TRUE(controller_->OnRegister(RegWithInstance("a1", "aaaa"), first).ok());
  const v1::RunAssignment a = FakeLink::Assignments(first->Take()).at(0);
  controller_->OnHeartbeat("a1", HeartbeatOf({a}, 1));  // confirmed: it may be writing
  controller_->OnDisconnect("a1", first.get());
  auto clone = std::make_shared<FakeLink>();
  ASSERT_TRUE(controller_->OnRegister(RegWithInstance("a1", "bbbb"), clone).ok());
  EXPECT_TRUE(FakeLink::Assignments(clone->Take()).empty()) << "device still leased";
  EXPECT_EQ(store_->GetRun(a.run_id())->state(), v1::RUN_ASSIGNED);
  clock_.AdvanceMs(options_.lease_ttl_ms);
  controller_->Tick();
  std::vector<v1::RunAssignment> again = FakeLink::Assignments(clone->Take());
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0].run_id(), a.run_id());
  EXPECT_EQ(again[0].attempt(), 2u);
}

// An agent still holding a run whose lease is gone (it failed while the agent was away)
// is told to stop it on its next heartbeat, so an unstarted run does not linger.
TEST_F(ControllerFaultsTest, AHeartbeatListingARunWhoseLeaseIsGoneGetsACancel) {
  auto link = std::make_shared<FakeLink>();
  const v1::RunAssignment a = SubmitAndAssign(link);
  v1::RunAssignment gone = a;
  gone.set_attempt(a.attempt() + 5);
  controller_->OnHeartbeat("a1", HeartbeatOf({gone}, 3));
  bool canceled = false;
  for (const auto& m : link->Take()) {
    canceled = canceled || (m.has_cancel() && m.cancel().run_id() == a.run_id() &&
                            m.cancel().attempt() == gone.attempt());
  }
  EXPECT_TRUE(canceled);
}

// Attempts lost because the agent fenced itself in time (a controller stall between
// TTL - TTL/3 and the TTL) do not count toward max_attempts (2 in this fixture).
TEST_F(ControllerFaultsTest, FencedAttemptsDoNotCountTowardMaxAttempts) {
  auto link = std::make_shared<FakeLink>();
  v1::RunAssignment a = SubmitAndAssign(link);
  for (int i = 0; i < 3; ++i) {
    v1::RunFinished fenced = Done(a);
    fenced.set_outcome(v1::RUN_OUTCOME_FENCED);
    controller_->OnFinished("a1", fenced);
    std::vector<v1::RunAssignment> again = FakeLink::Assignments(link->Take());
    ASSERT_EQ(again.size(), 1u) << "fence " << i;
    ASSERT_EQ(again[0].run_id(), a.run_id());
    a = again[0];
  }
  EXPECT_EQ(a.attempt(), 4u);
  controller_->OnFinished("a1", Done(a));
  EXPECT_EQ(store_->GetRun(a.run_id())->state(), v1::RUN_DONE);
}

// A controller that died between a run's final write and its experiment's: the next
// process brings the experiment up to date on its first tick.
TEST_F(ControllerFaultsTest, ARestartFinishesAnExperimentWhoseLastWriteWasLost) {
  auto exp = controller_->Submit("m.yaml", kMatrix);
  ASSERT_TRUE(exp.ok());
  auto stored = store_->GetExperiment(exp->id(), false);
  ASSERT_TRUE(stored.ok());
  for (const v1::Run& run : stored->runs()) {
    ASSERT_TRUE(store_->FinishRun(run.id(), 0, v1::RUN_CANCELED, "x", 1, nullptr).ok());
  }
  ASSERT_TRUE(store_->UpdateExperimentState(exp->id(), v1::EXPERIMENT_RUNNING, "", 0).ok());
  Reopen();
  controller_->Tick();
  EXPECT_EQ(store_->GetExperiment(exp->id(), false)->state(), v1::EXPERIMENT_DONE);
}

}  // namespace
}  // namespace blkbench
