// The no-I/O rule: measured time without a completed read or write is not a result.
#include "common/result_checks.h"

#include <gtest/gtest.h>

namespace blkbench {
namespace {

TEST(ResultChecksTest, MeasuredTimeWithoutIoIsRefused) {
  v1::RunResult r;
  r.set_duration_ns(1'500'000'000);
  absl::Status s = CheckResultHasIo(r);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(s.message().rfind("no I/O completed in 1.5 s of measured run time", 0), 0u) << s;
}

TEST(ResultChecksTest, AnyReadOrWriteOverAllJobsIsEnough) {
  v1::RunResult r;
  r.set_duration_ns(1'000'000'000);
  r.mutable_io()->set_read_ios(1);
  r.add_jobs()->set_name("idle");  // a job without I/O beside one that did some
  EXPECT_TRUE(CheckResultHasIo(r).ok());
  r.mutable_io()->set_read_ios(0);
  r.mutable_io()->set_write_ios(3);
  EXPECT_TRUE(CheckResultHasIo(r).ok());
}

TEST(ResultChecksTest, NoMeasuredTimeIsNotJudged) {
  EXPECT_TRUE(CheckResultHasIo(v1::RunResult()).ok());
}

}  // namespace
}  // namespace blkbench
