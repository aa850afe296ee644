// Controller with group commit on (commit_window_ms > 0): a batch of several agents'
// reports is one store transaction; a failed batch fails every report in it and
// acknowledges none; a result queued behind its samples in the same batch is stored.
#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "common/states.h"
#include "controller/controller_test_util.h"
#include "controller/store/store_wrapper.h"
#include "gtest/gtest.h"

namespace blkbench {
namespace {

// A link whose acks a test can wait for (acks come from the batcher's thread).
class AwaitLink final : public AgentLink {
 public:
  bool Send(const v1::ControllerMessage& msg) override {
    absl::MutexLock lock(&mu_);
    sent_.push_back(msg);
    return true;
  }
  // Waits until `n` acks arrived since the last call; returns every message sent since.
  std::vector<v1::ControllerMessage> AwaitAcks(size_t n) {
    absl::MutexLock lock(&mu_);
    auto enough = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      size_t acks = 0;
      for (const auto& m : sent_) acks += m.has_ack() ? 1 : 0;
      return acks >= n;
    };
    mu_.Await(absl::Condition(&enough));
    return std::exchange(sent_, {});
  }

 private:
  absl::Mutex mu_;
  std::vector<v1::ControllerMessage> sent_ ABSL_GUARDED_BY(mu_);
};

// Commits batches on the real store, or fails them whole (as a full disk fails COMMIT);
// records each batch's size.
class BatchStore final : public StoreWrapper {
 public:
  explicit BatchStore(Store& target) : StoreWrapper(target), target_(target) {}
  absl::StatusOr<std::vector<absl::Status>> CommitReports(
      const std::vector<AgentReport>& reports) override {
    {
      absl::MutexLock lock(&mu_);
      sizes_.push_back(reports.size());
    }
    if (fail_.load()) return absl::ResourceExhaustedError("database or disk is full");
    return target_.CommitReports(reports);
  }
  void SetFailing(bool f) { fail_.store(f); }
  std::vector<size_t> sizes() {
    absl::MutexLock lock(&mu_);
    return sizes_;
  }

 private:
  Store& target_;
  std::atomic<bool> fail_{false};
  absl::Mutex mu_;
  std::vector<size_t> sizes_ ABSL_GUARDED_BY(mu_);
};

class GroupCommitTest : public ControllerTest {
 protected:
  // A controller on BatchStore whose batches close only at 4 reports (the window is
  // longer than any test), with four runs assigned to two agents.
  void SetUpFourRuns() {
    controller_.reset();
    batch_store_ = std::make_unique<BatchStore>(*store_);
    options_.commit_window_ms = 3'600'000;
    options_.commit_max_reports = 4;
    controller_ = std::make_unique<Controller>(*batch_store_, clock_, options_);
    ASSERT_TRUE(controller_->Start().ok());
    ASSERT_TRUE(controller_->Submit("m.yaml", kMatrix).ok());  // 2 cells x 2 repeats
    for (int i = 0; i < 2; ++i) {
      links_[i] = std::make_shared<FakeLink>();
      ASSERT_TRUE(controller_
                      ->OnRegister(Reg(i == 0 ? "a1" : "a2", {"/dev/" + std::to_string(i) + "x",
                                                              "/dev/" + std::to_string(i) + "y"}),
                                   links_[i])
                      .ok());
      for (const v1::RunAssignment& a : FakeLink::Assignments(links_[i]->Take())) {
        runs_.push_back(a);
        agent_of_.push_back(i == 0 ? "a1" : "a2");
      }
    }
    ASSERT_EQ(runs_.size(), 4u);
    // From here on, acks go to links the test can wait on.
    for (int i = 0; i < 2; ++i) {
      await_[i] = std::make_shared<AwaitLink>();
      v1::Register r = Reg(i == 0 ? "a1" : "a2",
                           {"/dev/" + std::to_string(i) + "x", "/dev/" + std::to_string(i) + "y"});
      for (size_t k = 0; k < runs_.size(); ++k) {
        if (agent_of_[k] != r.agent_id()) continue;
        v1::ActiveRun* ar = r.add_active_runs();
        ar->set_run_id(runs_[k].run_id());
        ar->set_attempt(runs_[k].attempt());
        ar->set_lease_id(runs_[k].lease_id());
      }
      ASSERT_TRUE(controller_->OnRegister(r, await_[i]).ok());
      await_[i]->AwaitAcks(0);  // drop the Registered reply
    }
  }
  // Waits for one ack per report of a batch whose reports were for runs_[k], k in
  // `reported`; returns every message both agents got.
  std::vector<v1::ControllerMessage> AwaitBatch(const std::vector<size_t>& reported) {
    size_t per_agent[2] = {0, 0};
    for (size_t k : reported) ++per_agent[agent_of_[k] == "a1" ? 0 : 1];
    std::vector<v1::ControllerMessage> got;
    for (int i = 0; i < 2; ++i) {
      std::vector<v1::ControllerMessage> m = await_[i]->AwaitAcks(per_agent[i]);
      got.insert(got.end(), m.begin(), m.end());
    }
    return got;
  }
  std::unique_ptr<BatchStore> batch_store_;
  std::shared_ptr<FakeLink> links_[2];
  std::shared_ptr<AwaitLink> await_[2];
  std::vector<v1::RunAssignment> runs_;
  std::vector<std::string> agent_of_;
};

TEST_F(GroupCommitTest, AFailedBatchFailsEveryReportInItAndAcknowledgesNone) {
  SetUpFourRuns();
  batch_store_->SetFailing(true);
  for (size_t k = 0; k < runs_.size(); ++k) {
    controller_->OnSample(agent_of_[k], SampleOf(runs_[k], 1));
  }
  size_t acks = 0;
  for (const v1::ControllerMessage& m : AwaitBatch({0, 1, 2, 3})) {
    if (!m.has_ack()) continue;
    ++acks;
    EXPECT_EQ(m.ack().sample_seq(), 0u) << m.DebugString();  // nothing acknowledged
    EXPECT_EQ(m.ack().retry_after_ms(), options_.store_retry_ms);
    EXPECT_TRUE(m.ack().error().empty()) << "a store failure is not a rejection";
  }
  EXPECT_EQ(acks, 4u);
  EXPECT_EQ(batch_store_->sizes(), (std::vector<size_t>{4}));  // one batch of all four
  for (const v1::RunAssignment& a : runs_) {
    auto samples = store_->ListSamples(a.run_id());
    ASSERT_TRUE(samples.ok());
    EXPECT_TRUE(samples->empty());
  }

  // The agents resend: one batch again, every sample stored and acknowledged.
  batch_store_->SetFailing(false);
  for (size_t k = 0; k < runs_.size(); ++k) {
    controller_->OnSample(agent_of_[k], SampleOf(runs_[k], 1));
  }
  for (const v1::ControllerMessage& m : AwaitBatch({0, 1, 2, 3})) {
    if (!m.has_ack()) continue;
    EXPECT_EQ(m.ack().sample_seq(), 1u);
    EXPECT_EQ(m.ack().retry_after_ms(), 0u);
  }
  EXPECT_EQ(batch_store_->sizes(), (std::vector<size_t>{4, 4}));
  for (const v1::RunAssignment& a : runs_) {
    auto samples = store_->ListSamples(a.run_id());
    ASSERT_TRUE(samples.ok());
    EXPECT_EQ(samples->size(), 1u);
  }
}

TEST_F(GroupCommitTest, AResultBehindItsSamplesInOneBatchIsStoredAfterThem) {
  SetUpFourRuns();
  // Run 0: samples 1 and 2 and its result, in order; run 1: one sample. One batch of 4.
  controller_->OnSample(agent_of_[0], SampleOf(runs_[0], 1));
  controller_->OnSample(agent_of_[0], SampleOf(runs_[0], 2));
  v1::RunFinished fin = Done(runs_[0]);
  fin.set_last_sample_seq(2);
  controller_->OnFinished(agent_of_[0], fin);
  controller_->OnSample(agent_of_[1], SampleOf(runs_[1], 1));
  bool finished = false;
  for (const v1::ControllerMessage& m : AwaitBatch({0, 0, 0, 1})) {
    if (m.has_ack() && m.ack().run_id() == runs_[0].run_id() && m.ack().finished()) finished = true;
  }
  EXPECT_TRUE(finished);
  EXPECT_EQ(batch_store_->sizes(), (std::vector<size_t>{4}));
  auto run = store_->GetRun(runs_[0].run_id());
  ASSERT_TRUE(run.ok());
  EXPECT_EQ(run->state(), v1::RUN_DONE);
  EXPECT_EQ(run->samples(), 2u);
}

TEST_F(GroupCommitTest, AResultWhoseSamplesAreMissingIsNotStoredAndResent) {
  SetUpFourRuns();
  // Sample 1 never arrived (lost): the result naming 2 samples must wait for it.
  controller_->OnSample(agent_of_[0], SampleOf(runs_[0], 2));
  v1::RunFinished fin = Done(runs_[0]);
  fin.set_last_sample_seq(2);
  controller_->OnFinished(agent_of_[0], fin);
  controller_->OnSample(agent_of_[1], SampleOf(runs_[1], 1));
  controller_->OnSample(agent_of_[2], SampleOf(runs_[2], 1));
  bool retry = false;
  for (const v1::ControllerMessage& m : AwaitBatch({0, 0, 1, 2})) {
    if (!m.has_ack() || m.ack().run_id() != runs_[0].run_id()) continue;
    EXPECT_EQ(m.ack().sample_seq(), 0u) << "sample 1 is missing: nothing is contiguous";
    EXPECT_FALSE(m.ack().finished());
    if (m.ack().retry_after_ms() > 0) retry = true;  // the result: resend later
  }
  EXPECT_TRUE(retry);
  auto run = store_->GetRun(runs_[0].run_id());
  ASSERT_TRUE(run.ok());
  EXPECT_FALSE(IsFinalRunState(run->state())) << "stored with a hole";
}

}  // namespace
}  // namespace blkbench
