// LabelProblem: what a name or device class may hold.
#include "workloads/labels.h"

#include "gtest/gtest.h"

namespace blkbench::workloads {
namespace {

TEST(LabelsTest, PlainAndUnicodeNamesPass) {
  for (const char* ok : {"nightly", "sim:null_blk", "bfq vs kyber, 4k", "m\xc3\xbcnchen-lab"}) {
    EXPECT_EQ(LabelProblem(ok), "") << ok;
  }
}

TEST(LabelsTest, ControlBidiInvalidAndLongAreRefusedWithWhere) {
  EXPECT_EQ(LabelProblem(""), "it is empty");
  EXPECT_EQ(LabelProblem(std::string("a\0b", 3)), "a control character at byte 1");
  EXPECT_EQ(LabelProblem("a\nb"), "a control character at byte 1");
  EXPECT_EQ(LabelProblem("ab\xe2\x80\xae"
                         "cd"),
            "a bidirectional override at byte 2");
  EXPECT_EQ(LabelProblem("\xe2\x81\xa6x"), "a bidirectional override at byte 0");
  EXPECT_EQ(LabelProblem("\xc2\x85"), "a control character at byte 0");  // NEL (C1)
  EXPECT_EQ(LabelProblem("\xc0\xaf"), "invalid UTF-8 at byte 0");        // overlong '/'
  EXPECT_EQ(LabelProblem("\xed\xa0\x80"), "invalid UTF-8 at byte 0");    // surrogate
  EXPECT_EQ(LabelProblem("ab\xe2\x80"), "invalid UTF-8 at byte 2");      // truncated
  EXPECT_EQ(LabelProblem(std::string(129, 'x')), "it is 129 bytes (at most 128)");
}

}  // namespace
}  // namespace blkbench::workloads
