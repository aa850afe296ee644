// The host's judgement of a guest's run of a test: only a test the guest ran and reported
// OK passes; a skip, a failure, a crash or a filter that matched nothing fail with why.
#include "common/testing/in_guest.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace blkbench::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kName[] = "LoopTest.DeviceMapperHolderIsRefused";

TEST(JudgeGuestRunTest, OkWithExitZeroPasses) {
  const char* out =
      "Note: Google Test filter = LoopTest.DeviceMapperHolderIsRefused\n"
      "[ RUN      ] LoopTest.DeviceMapperHolderIsRefused\n"
      "[       OK ] LoopTest.DeviceMapperHolderIsRefused (412 ms)\n"
      "[  PASSED  ] 1 test.\n";
  EXPECT_TRUE(JudgeGuestRun(kName, 0, out).passed);
}

TEST(JudgeGuestRunTest, ASkipInTheGuestFailsWithItsReason) {
  const char* out =
      "[ RUN      ] LoopTest.DeviceMapperHolderIsRefused\n"
      "../agent/device/loop_device_test.cc:326: Skipped\n"
      "device-mapper unavailable: /dev/mapper/control: open failed\n"
      "[  SKIPPED ] LoopTest.DeviceMapperHolderIsRefused (50 ms)\n"
      "[  PASSED  ] 0 tests.\n"
      "[  SKIPPED ] 1 test, listed below:\n"
      "[  SKIPPED ] LoopTest.DeviceMapperHolderIsRefused\n";
  GuestVerdict v = JudgeGuestRun(kName, 0, out);
  EXPECT_FALSE(v.passed);
  EXPECT_THAT(v.why, HasSubstr("skipped in the guest too"));
  EXPECT_THAT(v.why, HasSubstr("device-mapper unavailable: /dev/mapper/control: open failed"));
}

TEST(JudgeGuestRunTest, AFailureQuotesTheTestsOutput) {
  const char* out =
      "[ RUN      ] LoopTest.DeviceMapperHolderIsRefused\n"
      "../agent/device/loop_device_test.cc:60: Failure\n"
      "Value of: status.message()\n"
      "[  FAILED  ] LoopTest.DeviceMapperHolderIsRefused (80 ms)\n"
      "[  FAILED  ] 1 test, listed below:\n";
  GuestVerdict v = JudgeGuestRun(kName, 1, out);
  EXPECT_FALSE(v.passed);
  EXPECT_THAT(v.why, HasSubstr("failed in the guest"));
  EXPECT_THAT(v.why, HasSubstr("loop_device_test.cc:60: Failure\nValue of: status.message()"));
  EXPECT_THAT(v.why, Not(HasSubstr("1 test, listed below")));
}

TEST(JudgeGuestRunTest, ACrashOrAFilterThatMatchedNothingFails) {
  GuestVerdict crashed =
      JudgeGuestRun(kName, -1, "[ RUN      ] LoopTest.DeviceMapperHolderIsRefused\nAddressSan");
  EXPECT_FALSE(crashed.passed);
  EXPECT_THAT(crashed.why, HasSubstr("without a result (exit code -1)"));

  GuestVerdict none = JudgeGuestRun(kName, 0, "[==========] 0 tests from 0 test suites ran.\n");
  EXPECT_FALSE(none.passed);
  EXPECT_THAT(none.why, HasSubstr("did not run " + std::string(kName)));

  // Another test's OK line is not this one's.
  GuestVerdict other =
      JudgeGuestRun(kName, 0,
                    "[ RUN      ] LoopTest.DeviceMapperHolderIsRefusedToo\n"
                    "[       OK ] LoopTest.DeviceMapperHolderIsRefusedToo (1 ms)\n");
  EXPECT_FALSE(other.passed);
}

TEST(JudgeGuestRunTest, OkButANonZeroExitFails) {
  GuestVerdict v = JudgeGuestRun(kName, 1,
                                 "[ RUN      ] LoopTest.DeviceMapperHolderIsRefused\n"
                                 "[       OK ] LoopTest.DeviceMapperHolderIsRefused (1 ms)\n"
                                 "==1==ERROR: LeakSanitizer: detected memory leaks\n");
  EXPECT_FALSE(v.passed);
  EXPECT_THAT(v.why, HasSubstr("exited with 1"));
}

// ctest marks a test skipped when its output matches "\[  SKIPPED \]"
// (gtest_discover_tests' SKIP_REGULAR_EXPRESSION): the host test must not carry the
// guest's marker, or a failure would be reported as a skip.
TEST(QuoteGuestOutputTest, PrefixesLinesAndRewordsTheSkipMarker) {
  const std::string quoted = QuoteGuestOutput("[ RUN      ] A.B\n[  SKIPPED ] A.B (0 ms)\nlast");
  EXPECT_EQ(quoted,
            "[guest] [ RUN      ] A.B\n"
            "[guest] [  SKIPPED in the guest ] A.B (0 ms)\n"
            "[guest] last\n");
  EXPECT_THAT(quoted, Not(HasSubstr("[  SKIPPED ]")));
}

}  // namespace
}  // namespace blkbench::testing
