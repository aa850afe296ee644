// Limits on what a client can make the controller do: runs per experiment (at submit and
// when adding repeats), matrix bytes — each a clear InvalidArgument that stores nothing —
// and the pieces of the server's limits (controller/limits.h, deadline.h); the limits
// over a real gRPC server are in tests/limits_test.cc.
#include <string>

#include "controller/controller_test_util.h"
#include "controller/deadline.h"
#include "controller/limits.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace blkbench {
namespace {

using ::testing::HasSubstr;

TEST_F(ControllerTest, AnExperimentOverTheRunLimitIsRefusedAndNothingStored) {
  controller_.reset();
  options_.max_runs_per_experiment = 3;  // kMatrix: 2 cells x 2 repeats = 4 runs
  controller_ = std::make_unique<Controller>(*store_, clock_, options_);
  ASSERT_TRUE(controller_->Start().ok());
  auto refused = controller_->Submit("big.yaml", kMatrix);
  ASSERT_FALSE(refused.ok());
  EXPECT_TRUE(absl::IsInvalidArgument(refused.status()));
  EXPECT_THAT(std::string(refused.status().message()),
              HasSubstr("big.yaml: 2 cells x 2 repeats = 4 runs"));
  EXPECT_THAT(std::string(refused.status().message()), HasSubstr("--max_runs"));
  EXPECT_TRUE(controller_->ListExperiments(0)->empty());

  controller_.reset();
  options_.max_runs_per_experiment = 5;
  controller_ = std::make_unique<Controller>(*store_, clock_, options_);
  ASSERT_TRUE(controller_->Start().ok());
  auto exp = controller_->Submit("m.yaml", kMatrix);
  ASSERT_TRUE(exp.ok());
  auto more = controller_->AddRepeats(exp->id(), {0, 1}, 1);  // 4 + 2 > 5
  EXPECT_TRUE(absl::IsInvalidArgument(more.status()));
  EXPECT_EQ(controller_->GetExperiment(exp->id(), false)->runs_size(), 4);
  EXPECT_TRUE(controller_->AddRepeats(exp->id(), {0}, 1).ok());  // 5 is fine
}

TEST_F(ControllerTest, AMatrixOverFourMiBIsRefusedBeforeParsing) {
  std::string huge = kMatrix;
  huge += "# " + std::string((4 << 20) + 1, 'x') + "\n";
  auto refused = controller_->Submit("huge.yaml", huge);
  ASSERT_FALSE(refused.ok());
  EXPECT_TRUE(absl::IsInvalidArgument(refused.status()));
  EXPECT_THAT(std::string(refused.status().message()), HasSubstr("at most 4194304"));
  EXPECT_TRUE(controller_->ListExperiments(0)->empty());
}

TEST_F(ControllerTest, AgentIdsAndDeviceClassesMustBePrintable) {
  auto link = std::make_shared<FakeLink>();
  absl::Status bidi = controller_->OnRegister(Reg("lab\xe2\x80\xae"
                                                  "1",
                                                  {"/dev/x"}),
                                              link);
  EXPECT_TRUE(absl::IsInvalidArgument(bidi)) << bidi;
  EXPECT_THAT(std::string(bidi.message()), HasSubstr("agent_id: a bidirectional override"));
  absl::Status nul = controller_->OnRegister(Reg("a1", {"/dev/x"}, std::string("ss\0d", 4)), link);
  EXPECT_TRUE(absl::IsInvalidArgument(nul)) << nul;
  EXPECT_THAT(std::string(nul.message()), HasSubstr("/dev/x: class: a control character"));
  EXPECT_TRUE(controller_->ListAgents()->empty());
  EXPECT_TRUE(link->Take().empty());
}

TEST(TokenBucketTest, StartsFullRefillsAtTheRateAndNeverAboveTheBurst) {
  FakeClock clock;
  TokenBucket bucket(clock, /*rate_per_s=*/2, /*burst=*/3);
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(bucket.TryTake()) << i;
  EXPECT_FALSE(bucket.TryTake());
  clock.AdvanceMs(499);  // 0.998 tokens
  EXPECT_FALSE(bucket.TryTake());
  clock.AdvanceMs(1);
  EXPECT_TRUE(bucket.TryTake());
  EXPECT_FALSE(bucket.TryTake());
  clock.AdvanceMs(60'000);  // capped at the burst
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(bucket.TryTake()) << i;
  EXPECT_FALSE(bucket.TryTake());
}

TEST(StreamSlotsTest, RefusesBeyondTheCapacityUntilASlotIsReleased) {
  StreamSlots slots(2);
  {
    StreamSlots::Slot a = slots.TryAcquire();
    StreamSlots::Slot b = slots.TryAcquire();
    EXPECT_TRUE(a.held() && b.held());
    EXPECT_FALSE(slots.TryAcquire().held());
    EXPECT_EQ(slots.in_use(), 2);
    StreamSlots::Slot moved = std::move(a);  // still one slot
    EXPECT_EQ(slots.in_use(), 2);
  }
  EXPECT_EQ(slots.in_use(), 0);
  EXPECT_EQ(slots.refused(), 1u);
  EXPECT_TRUE(slots.TryAcquire().held());
}

TEST(DeadlineTest, ChecksOnTheClockAndNamesStepBudgetAndOrigin) {
  FakeClock clock;
  EXPECT_TRUE(Deadline().Check("anything").ok());
  const Deadline d(clock, 200, "the controller's --unary_deadline_ms");
  clock.AdvanceMs(199);
  EXPECT_TRUE(d.Check("reading").ok());
  clock.AdvanceMs(1);
  const absl::Status s = d.Check("reading the samples of run 3");
  EXPECT_TRUE(absl::IsDeadlineExceeded(s)) << s;
  EXPECT_EQ(s.message(),
            "the call's deadline of 200 ms (the controller's --unary_deadline_ms) passed 0 ms "
            "ago, before reading the samples of run 3; nothing more was done");
}

TEST(CheckLimitsTest, NamesTheFlagOfAValueOutOfRange) {
  EXPECT_TRUE(CheckLimits(ServiceLimits()).ok());
  EXPECT_EQ(MaxServerThreads(ServiceLimits()), 64 + 64 + 1);  // agent streams hold none
  ServiceLimits none;
  none.max_agent_streams = 0;
  EXPECT_THAT(std::string(CheckLimits(none).message()), HasSubstr("--max_agent_streams is 0"));
  ServiceLimits slow;
  slow.agent_messages_per_s = 0.5;
  EXPECT_THAT(std::string(CheckLimits(slow).message()), HasSubstr("--agent_msg_rate"));
}

TEST_F(ControllerTest, ASubmitPastItsDeadlineStoresNothing) {
  const Deadline passed(clock_, 0, "the caller's");
  auto refused = controller_->Submit("m.yaml", kMatrix, "", passed);
  EXPECT_TRUE(absl::IsDeadlineExceeded(refused.status())) << refused.status();
  EXPECT_THAT(std::string(refused.status().message()), HasSubstr("before storing the experiment"));
  EXPECT_TRUE(controller_->ListExperiments(0)->empty());
}

}  // namespace
}  // namespace blkbench
