// Tests for the fio cpus_allowed list parser.
#include "agent/executor/cpu_list.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace blkbench {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

TEST(CpuList, RangesAndSingles) {
  EXPECT_THAT(*ParseCpuList("0-3,6", 8), ElementsAre(0, 1, 2, 3, 6));
  EXPECT_THAT(*ParseCpuList(" 5 , 1-2 ,2", 8), ElementsAre(1, 2, 5));
  EXPECT_THAT(*ParseCpuList("7", 8), ElementsAre(7));
  EXPECT_THAT(*ParseCpuList("", 8), IsEmpty());
  EXPECT_THAT(*ParseCpuList("  ", 8), IsEmpty());
}

TEST(CpuList, RejectsBadSyntaxAndLargeCpus) {
  for (const char* bad : {"a", "3-1", "1-", "-1", "1,,2", "0-3:2", "1.5", "8", "0-8"}) {
    absl::StatusOr<std::vector<uint32_t>> r = ParseCpuList(bad, 8);
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << bad;
    if (!r.ok()) {
      EXPECT_THAT(std::string(r.status().message()), ::testing::HasSubstr("cpus_allowed"));
    }
  }
}

}  // namespace
}  // namespace blkbench
