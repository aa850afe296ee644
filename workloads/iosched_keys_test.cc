// Tests for the schedulers' tunables as matrix keys (fifo_batch, slice_idle, ...): stored
// as sysfs takes them, axes like any key, and checked against the cell's scheduler, kernel
// and device with the key's position.
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "workloads/matrix.h"

namespace blkbench::workloads {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr char kHead[] = "name: t\ntarget: {device_class: nvme}\n";

Matrix Parse(const std::string& body) {
  absl::StatusOr<Matrix> m = ParseMatrix(absl::StrCat(kHead, body), "m.yaml");
  EXPECT_TRUE(m.ok()) << m.status();
  return m.ok() ? *std::move(m) : Matrix{};
}

std::vector<std::string> Errors(const std::string& text) {
  absl::StatusOr<Matrix> m = ParseMatrix(text, "m.yaml");
  EXPECT_FALSE(m.ok()) << "parsed:\n" << text;
  if (m.ok()) return {};
  return absl::StrSplit(std::string(m.status().message()), '\n');
}

std::string OneError(const std::string& body) {
  std::vector<std::string> errors = Errors(absl::StrCat(kHead, body));
  EXPECT_EQ(errors.size(), 1u) << absl::StrJoin(errors, "\n");
  return errors.empty() ? "" : errors[0];
}

TEST(IoschedKeysTest, TunablesAreStoredAsSysfsTakesThem) {
  Matrix m = Parse(
      "job: {scheduler: mq-deadline, fifo_batch: 1, read_expire: 250, "
      "writes_starved: -1, front_merges: false}\n");
  ASSERT_EQ(m.cells.size(), 1u);
  const auto& iosched = m.cells[0].queue().iosched();
  EXPECT_EQ(iosched.size(), 4u);
  EXPECT_EQ(iosched.at("fifo_batch"), "1");
  EXPECT_EQ(iosched.at("read_expire"), "250");
  EXPECT_EQ(iosched.at("writes_starved"), "-1");
  EXPECT_EQ(iosched.at("front_merges"), "0");
  Matrix bfq = Parse("job: {scheduler: bfq, slice_idle_us: 500, low_latency: 0}\n");
  EXPECT_EQ(bfq.cells[0].queue().iosched().at("slice_idle_us"), "500");
  Matrix kyber = Parse("job: {scheduler: kyber, read_lat_nsec: 1000000}\n");
  EXPECT_EQ(kyber.cells[0].queue().iosched().at("read_lat_nsec"), "1000000");
}

TEST(IoschedKeysTest, ATunableIsAnAxisLikeAnyKey) {
  Matrix m = Parse("job: {scheduler: mq-deadline}\nmatrix: {fifo_batch: [1, 16]}\n");
  ASSERT_EQ(m.cells.size(), 2u);
  EXPECT_THAT(m.axes, ElementsAre("fifo_batch"));
  EXPECT_EQ(m.cells[0].queue().iosched().at("fifo_batch"), "1");
  EXPECT_EQ(m.cells[1].queue().iosched().at("fifo_batch"), "16");
  EXPECT_EQ(m.cells[1].queue().scheduler(), "mq-deadline");
  // Values are compared by meaning, as 4k and 4096 are.
  EXPECT_EQ(OneError("job: {scheduler: bfq}\nmatrix: {low_latency: [0, false]}\n"),
            "m.yaml:4:27: key 'low_latency': duplicate axis value 'false' (same as '0' at line 4)");
}

TEST(IoschedKeysTest, ValuesOutsideTheKernelsRangeAreErrors) {
  EXPECT_EQ(OneError("job: {scheduler: mq-deadline, fifo_batch: -1}\n"),
            "m.yaml:3:43: key 'fifo_batch': expected an integer from 0 to 2147483647 (requests; "
            "mq-deadline: requests dispatched in one direction and sector order before the FIFOs "
            "are looked at again (default 16)), got '-1'");
  EXPECT_THAT(OneError("job: {scheduler: bfq, timeout_sync: 0}\n"),
              HasSubstr("m.yaml:3:37: key 'timeout_sync': expected an integer from 1 to "
                        "2147483647 (ms; bfq: "));
  EXPECT_THAT(OneError("job: {scheduler: bfq, strict_guarantees: 2}\n"),
              HasSubstr("key 'strict_guarantees': expected 0 or 1 (bfq: "));
  EXPECT_THAT(OneError("job: {scheduler: mq-deadline, read_expire: 500ms}\n"),
              HasSubstr("key 'read_expire': expected an integer from 0 to 2147483647 (ms; "));
}

TEST(IoschedKeysTest, ATunableOfAnotherSchedulerIsAnErrorAtTheKey) {
  EXPECT_EQ(OneError("job:\n  scheduler: mq-deadline\n  slice_idle: 0\n"),
            "m.yaml:5:15: key 'slice_idle' is a tunable of bfq, not of scheduler mq-deadline "
            "(mq-deadline has read_expire, write_expire, writes_starved, front_merges, "
            "fifo_batch, async_depth, prio_aging_expire)");
  // Across a scheduler axis: the cell that does not have it is named.
  EXPECT_EQ(OneError("job: {fifo_batch: 1}\nmatrix: {scheduler: [mq-deadline, kyber]}\n"),
            "m.yaml:3:19: key 'fifo_batch' is a tunable of mq-deadline, not of scheduler kyber "
            "(kyber has read_lat_nsec, write_lat_nsec) (cell 1: scheduler=kyber)");
  EXPECT_EQ(OneError("job: {scheduler: none, read_lat_nsec: 1}\n"),
            "m.yaml:3:39: key 'read_lat_nsec' is a tunable of kyber, not of scheduler none "
            "(none has none)");
  EXPECT_EQ(OneError("job: {fifo_batch: 1}\n"),
            "m.yaml:3:19: key 'fifo_batch' is a tunable of mq-deadline, and no scheduler is "
            "chosen; set scheduler: mq-deadline beside it (iosched/ holds the tunables of the "
            "scheduler in force)");
}

TEST(IoschedKeysTest, TyposAndMisplacedTunables) {
  EXPECT_EQ(OneError("job: {scheduler: mq-deadline, read_expre: 100}\n"),
            "m.yaml:3:31: unknown key 'read_expre' (did you mean 'read_expire'?)");
  EXPECT_EQ(OneError("job: {scheduler: bfq, slice_idle: 0, slice_idle_us: 0}\n"),
            "m.yaml:3:38: key 'slice_idle_us' sets the same option as 'slice_idle' (job:, line "
            "3); give only one of them");
  EXPECT_EQ(OneError("job: {scheduler: bfq}\njobs:\n  a: {slice_idle: 0}\n"),
            "m.yaml:5:7: job 'a': key 'slice_idle' is the cell's, not a job's; put it under job: "
            "or matrix:");
  EXPECT_EQ(OneError("fifo_batch: 1\n"),
            "m.yaml:3:1: key 'fifo_batch' is a job option; put it under job: or matrix:");
}

TEST(IoschedKeysTest, SimulatedCellsCheckTheKernelEraAndTheModel) {
  constexpr char kSim[] = "name: t\ntarget: {device_class: \"sim:ssd\", kernel: \"sim:5.14\"}\n";
  std::vector<std::string> era =
      Errors(absl::StrCat(kSim, "job: {scheduler: mq-deadline, prio_aging_expire: 100}\n"));
  EXPECT_THAT(era, ElementsAre("m.yaml:3:50: key 'prio_aging_expire': mq-deadline has no "
                               "prio_aging_expire before 6.0 (the kernel is 5.14)"));
  std::vector<std::string> model =
      Errors(absl::StrCat(kSim, "job: {scheduler: bfq, low_latency: 1}\n"));
  EXPECT_THAT(model, ElementsAre("m.yaml:3:36: key 'low_latency': 1 is not modelled by the "
                                 "engine, which runs bfq as with low_latency 0; it runs on real "
                                 "devices only"));
  EXPECT_TRUE(ParseMatrix(absl::StrCat(kSim,
                                       "job: {scheduler: bfq, low_latency: 0, slice_idle: "
                                       "0}\n"),
                          "m.yaml")
                  .ok());
  // A real kernel's era is not known at validate: the agent reports a missing file.
  EXPECT_TRUE(ParseMatrix("name: t\ntarget: {device_class: nvme, kernel: \"5.10*\"}\n"
                          "job: {scheduler: mq-deadline, prio_aging_expire: 100}\n",
                          "m.yaml")
                  .ok());
}

}  // namespace
}  // namespace blkbench::workloads
