// Limits on what a client can make the controller do: runs per experiment (at submit and
// when adding repeats), matrix bytes — each a clear InvalidArgument that stores nothing.
#include <string>

#include "controller/controller_test_util.h"
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

}  // namespace
}  // namespace blkbench
