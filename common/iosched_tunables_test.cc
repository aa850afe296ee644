// Tests for the schedulers' tunable table: names as sysfs has them, the kernel's ranges,
// and the checks against the chosen scheduler and kernel.
#include "common/iosched_tunables.h"

#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace blkbench {
namespace {

using ::testing::IsEmpty;

TEST(IoschedTunablesTest, NamesAreTheKernelsFiles) {
  // ls /sys/block/loop0/queue/iosched/ on 6.18 (mq-deadline, kyber) and bfq_attrs[].
  EXPECT_EQ(IoschedTunableNames("mq-deadline"),
            (std::vector<std::string_view>{"read_expire", "write_expire", "writes_starved",
                                           "front_merges", "fifo_batch", "async_depth",
                                           "prio_aging_expire"}));
  EXPECT_EQ(IoschedTunableNames("bfq"),
            (std::vector<std::string_view>{"strict_guarantees", "low_latency", "slice_idle",
                                           "slice_idle_us", "timeout_sync", "max_budget",
                                           "fifo_expire_sync", "fifo_expire_async", "back_seek_max",
                                           "back_seek_penalty"}));
  EXPECT_EQ(IoschedTunableNames("kyber"),
            (std::vector<std::string_view>{"read_lat_nsec", "write_lat_nsec"}));
  EXPECT_TRUE(IoschedTunableNames("none").empty());
  EXPECT_EQ(FindIoschedTunable("bfq", "fifo_batch"), nullptr);
  ASSERT_NE(FindIoschedTunable("mq-deadline", "fifo_batch"), nullptr);
}

TEST(IoschedTunablesTest, ValuesAreCanonicalDecimalsInTheKernelsRange) {
  const IoschedTunableDef& fifo_batch = *FindIoschedTunable("fifo_batch");
  EXPECT_EQ(CanonicalIoschedValue(fifo_batch, "1"), "1");
  EXPECT_EQ(CanonicalIoschedValue(fifo_batch, "0"), "0");
  EXPECT_EQ(CanonicalIoschedValue(fifo_batch, "2147483647"), "2147483647");
  EXPECT_EQ(CanonicalIoschedValue(fifo_batch, "2147483648"), std::nullopt);
  EXPECT_EQ(CanonicalIoschedValue(fifo_batch, "-1"), std::nullopt);
  EXPECT_EQ(CanonicalIoschedValue(fifo_batch, "16k"), std::nullopt);
  EXPECT_EQ(CanonicalIoschedValue(fifo_batch, ""), std::nullopt);
  // STORE_INT(deadline_writes_starved_store, ..., INT_MIN, INT_MAX).
  const IoschedTunableDef& starved = *FindIoschedTunable("writes_starved");
  EXPECT_EQ(CanonicalIoschedValue(starved, "-2147483648"), "-2147483648");
  EXPECT_EQ(CanonicalIoschedValue(starved, "-2147483649"), std::nullopt);
  // async_depth clamps to 1..INT_MAX; bfq's timeout_sync to 1..INT_MAX.
  EXPECT_EQ(CanonicalIoschedValue(*FindIoschedTunable("async_depth"), "0"), std::nullopt);
  EXPECT_EQ(CanonicalIoschedValue(*FindIoschedTunable("timeout_sync"), "0"), std::nullopt);
  // Flags take YAML's booleans too.
  EXPECT_EQ(CanonicalIoschedValue(*FindIoschedTunable("low_latency"), "false"), "0");
  EXPECT_EQ(CanonicalIoschedValue(*FindIoschedTunable("front_merges"), "2"), std::nullopt);
  EXPECT_EQ(CanonicalIoschedValue(*FindIoschedTunable("read_lat_nsec"), "18446744073709551615"),
            "18446744073709551615");
  EXPECT_EQ(CanonicalIoschedValue(*FindIoschedTunable("slice_idle_us"), "4294967296"),
            std::nullopt);
  EXPECT_EQ(IoschedTunableExpected(fifo_batch)
                .rfind("an integer from 0 to 2147483647 (requests; "
                       "mq-deadline: ",
                       0),
            0u);
}

v1::QueueSettings Queue(const std::string& scheduler,
                        std::vector<std::pair<std::string, std::string>> tunables) {
  v1::QueueSettings q;
  q.set_scheduler(scheduler);
  for (auto& [k, v] : tunables) (*q.mutable_iosched())[k] = v;
  return q;
}

TEST(IoschedTunablesTest, ChecksAgainstTheSchedulerAndTheKernel) {
  EXPECT_THAT(CheckIoschedTunables(Queue("mq-deadline", {{"fifo_batch", "1"}}), 616, true),
              IsEmpty());
  std::vector<IoschedProblem> p =
      CheckIoschedTunables(Queue("mq-deadline", {{"slice_idle", "0"}}), 0, false);
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].name, "slice_idle");
  EXPECT_EQ(p[0].message,
            "key 'slice_idle' is a tunable of bfq, not of scheduler mq-deadline (mq-deadline has "
            "read_expire, write_expire, writes_starved, front_merges, fifo_batch, async_depth, "
            "prio_aging_expire)");
  p = CheckIoschedTunables(Queue("none", {{"read_lat_nsec", "1"}}), 0, false);
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].message,
            "key 'read_lat_nsec' is a tunable of kyber, not of scheduler none (none has none)");
  p = CheckIoschedTunables(Queue("", {{"fifo_batch", "1"}}), 0, false);
  ASSERT_EQ(p.size(), 1u);
  EXPECT_NE(p[0].message.find("set scheduler: mq-deadline beside it"), std::string::npos);
  p = CheckIoschedTunables(Queue("bfq", {{"slice_idle", "0"}, {"slice_idle_us", "0"}}), 0, false);
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].name, "slice_idle_us");
  // prio_aging_expire came with 6.0, async_depth with 5.14.
  p = CheckIoschedTunables(Queue("mq-deadline", {{"prio_aging_expire", "100"}}), 514, true);
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].message,
            "key 'prio_aging_expire': mq-deadline has no prio_aging_expire before 6.0 (the "
            "kernel is 5.14)");
  EXPECT_THAT(CheckIoschedTunables(Queue("mq-deadline", {{"async_depth", "8"}}), 514, true),
              IsEmpty());
  // The engine never weight-raises: low_latency 1 only on real devices.
  EXPECT_THAT(CheckIoschedTunables(Queue("bfq", {{"low_latency", "1"}}), 514, false), IsEmpty());
  EXPECT_THAT(CheckIoschedTunables(Queue("bfq", {{"low_latency", "0"}}), 514, true), IsEmpty());
  p = CheckIoschedTunables(Queue("bfq", {{"low_latency", "1"}}), 514, true);
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].message,
            "key 'low_latency': 1 is not modelled by the engine, which runs bfq as with "
            "low_latency 0; it runs on real devices only");
}

}  // namespace
}  // namespace blkbench
