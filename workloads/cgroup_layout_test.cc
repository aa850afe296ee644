// Tests for the cgroup layout vocabulary: each kind parsed, groups filled from numjobs,
// and every malformed layout refused with a reason.
#include "workloads/cgroup_layout.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace blkbench::workloads {
namespace {

using ::testing::HasSubstr;
using v1::CgroupLayout;

std::string Groups(const CgroupLayout& layout) {
  std::string out;
  for (const v1::CgroupGroup& g : layout.groups()) {
    out += (out.empty() ? "" : ",") + g.name() + ":" + std::to_string(g.weight()) + "*" +
           std::to_string(g.jobs());
  }
  return out;
}

CgroupLayout MustParse(const std::string& text) {
  absl::StatusOr<CgroupLayout> layout = ParseCgroupLayout(text);
  EXPECT_TRUE(layout.ok()) << text << ": " << layout.status();
  return layout.ok() ? *layout : CgroupLayout();
}

std::string ErrorOf(const std::string& text) {
  absl::StatusOr<CgroupLayout> layout = ParseCgroupLayout(text);
  EXPECT_FALSE(layout.ok()) << text << " parsed as " << Groups(*layout);
  return layout.ok() ? "" : std::string(layout.status().message());
}

TEST(CgroupLayoutTest, RootHasNoGroups) {
  CgroupLayout layout = MustParse("root");
  EXPECT_EQ(layout.kind(), CgroupLayout::ROOT);
  FillCgroupGroups(8, layout);
  EXPECT_EQ(layout.groups_size(), 0);
  EXPECT_EQ(CgroupJobs(layout), 0u);
}

TEST(CgroupLayoutTest, OneTakesAllJobsWithDefaultOrGivenWeight) {
  CgroupLayout one = MustParse("one");
  EXPECT_EQ(one.kind(), CgroupLayout::ONE);
  FillCgroupGroups(4, one);
  EXPECT_EQ(Groups(one), "g0:100*4");
  CgroupLayout weighted = MustParse("one:500");
  FillCgroupGroups(3, weighted);
  FillCgroupGroups(3, weighted);  // idempotent
  EXPECT_EQ(Groups(weighted), "g0:500*3");
  EXPECT_EQ(Groups(MustParse("one:1")), "g0:1*0");
  EXPECT_EQ(Groups(MustParse("one:1000")), "g0:1000*0");
}

TEST(CgroupLayoutTest, PerJobGivesEachJobItsGroup) {
  CgroupLayout layout = MustParse("per-job");
  EXPECT_EQ(layout.kind(), CgroupLayout::PER_JOB);
  FillCgroupGroups(3, layout);
  FillCgroupGroups(3, layout);  // idempotent
  EXPECT_EQ(Groups(layout), "j0:100*1,j1:100*1,j2:100*1");
  EXPECT_EQ(CgroupJobs(layout), 3u);
}

TEST(CgroupLayoutTest, ExplicitGroupsKeepOrderWeightsAndJobs) {
  CgroupLayout layout = MustParse("heavy:1000*1,light:100*3");
  EXPECT_EQ(layout.kind(), CgroupLayout::GROUPS);
  FillCgroupGroups(99, layout);  // explicit groups are never rewritten
  EXPECT_EQ(Groups(layout), "heavy:1000*1,light:100*3");
  EXPECT_EQ(CgroupJobs(layout), 4u);
  EXPECT_EQ(Groups(MustParse("a-1:1*1, b_2:0x10*2")), "a-1:1*1,b_2:16*2");
  EXPECT_EQ(Groups(MustParse("solo:300*2")), "solo:300*2");
}

TEST(CgroupLayoutTest, BadLayoutsSayWhy) {
  EXPECT_THAT(ErrorOf("some"), HasSubstr("expected name:weight*jobs"));
  EXPECT_THAT(ErrorOf(""), HasSubstr("expected name:weight*jobs"));
  EXPECT_THAT(ErrorOf("one:0"), HasSubstr("weight '0' is not an integer from 1 to 1000"));
  EXPECT_THAT(ErrorOf("one:1001"), HasSubstr("weight '1001'"));
  EXPECT_THAT(ErrorOf("one:"), HasSubstr("weight ''"));
  EXPECT_THAT(ErrorOf("a:2000*1"), HasSubstr("weight '2000'"));
  EXPECT_THAT(ErrorOf("a:100*0"), HasSubstr("jobs '0' is not an integer from 1 to 4096"));
  EXPECT_THAT(ErrorOf("a:100*x"), HasSubstr("jobs 'x'"));
  EXPECT_THAT(ErrorOf("a*2:100"), HasSubstr("expected name:weight*jobs"));
  EXPECT_THAT(ErrorOf("Heavy:100*1"), HasSubstr("only hold a-z, 0-9, _ and -"));
  EXPECT_THAT(ErrorOf("a/b:100*1"), HasSubstr("only hold a-z"));
  EXPECT_THAT(ErrorOf("..:100*1"), HasSubstr("only hold a-z"));
  EXPECT_THAT(ErrorOf(":100*1"), HasSubstr("1 to 64 characters"));
  EXPECT_THAT(ErrorOf(std::string(65, 'a') + ":100*1"), HasSubstr("1 to 64 characters"));
  EXPECT_THAT(ErrorOf("tasks:100*1"), HasSubstr("cgroup control file"));
  EXPECT_THAT(ErrorOf("a:100*1,a:200*1"), HasSubstr("group name 'a' is used twice"));
  EXPECT_THAT(ErrorOf("a:100*1,"), HasSubstr("expected name:weight*jobs"));
  EXPECT_THAT(ErrorOf("per-job:5"), HasSubstr("expected name:weight*jobs"));
}

TEST(CgroupLayoutTest, ValidateAcceptsParsedLayoutsAndRefusesTamperedOnes) {
  for (const char* text : {"root", "one:7", "per-job", "a:1*2,b:1000*1"}) {
    CgroupLayout layout = MustParse(text);
    FillCgroupGroups(3, layout);
    EXPECT_TRUE(ValidateCgroupLayout(layout, 3).ok()) << text;
  }
  CgroupLayout layout = MustParse("a:100*1,b:100*1");
  EXPECT_THAT(ValidateCgroupLayout(layout, 3).message(), HasSubstr("places 2 jobs"));
  layout.mutable_groups(1)->set_name("../../etc");
  EXPECT_THAT(ValidateCgroupLayout(layout, 2).message(), HasSubstr("only hold a-z"));
  layout.mutable_groups(1)->set_name("a");
  EXPECT_THAT(ValidateCgroupLayout(layout, 2).message(), HasSubstr("used twice"));
  layout.mutable_groups(1)->set_name("b");
  layout.mutable_groups(1)->set_weight(0);
  EXPECT_THAT(ValidateCgroupLayout(layout, 2).message(), HasSubstr("weight"));
  layout.mutable_groups(1)->set_weight(100);
  layout.mutable_groups(1)->set_jobs(0);
  EXPECT_THAT(ValidateCgroupLayout(layout, 1).message(), HasSubstr("at least one job"));
  CgroupLayout root;
  root.add_groups()->set_name("x");
  EXPECT_FALSE(ValidateCgroupLayout(root, 1).ok());
  CgroupLayout empty_one;
  empty_one.set_kind(CgroupLayout::ONE);
  EXPECT_FALSE(ValidateCgroupLayout(empty_one, 1).ok());
}

}  // namespace
}  // namespace blkbench::workloads
