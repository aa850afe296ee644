// Tests for MakeDeviceModel: every kind builds, parameters apply, bad input is rejected.
#include <map>
#include <string>

#include "common/sim_vocabulary.h"
#include "engine/device/closed_loop_harness.h"
#include "engine/device/device_model.h"
#include "engine/device/hdd.h"
#include "engine/device/null_blk.h"
#include "gtest/gtest.h"

namespace blkbench::engine {
namespace {

using Params = std::map<std::string, std::string>;

TEST(DeviceFactoryTest, EveryKindBuilds) {
  struct Want {
    const char* kind;
    bool rotational;
    uint32_t queue_depth;
  };
  for (const Want& w :
       {Want{"null_blk", false, 64}, Want{"hdd", true, 32}, Want{"hdd-seed003", true, 32},
        Want{"ssd", false, 1'023}, Want{"ssd-sata", false, 32}, Want{"ssd-seed004", false, 32},
        Want{"optane", false, 1'023}, Want{"optane-p5800x", false, 1'023}}) {
    auto dev = MakeDeviceModel(w.kind, {}, 1);
    ASSERT_TRUE(dev.ok()) << w.kind << ": " << dev.status();
    EXPECT_EQ((*dev)->rotational(), w.rotational) << w.kind;
    EXPECT_EQ((*dev)->queue_depth(), w.queue_depth) << w.kind;
    EXPECT_EQ((*dev)->in_flight(), 0u);
    EXPECT_EQ((*dev)->NextCompletion(), kNever);
  }
}

TEST(DeviceFactoryTest, NullBlkParams) {
  auto dev = MakeDeviceModel("null_blk",
                             Params{{"null_blk.submit_queues", "128"},
                                    {"null_blk.hw_queue_depth", "1024"},
                                    {"null_blk.irqmode", "0"},
                                    {"null_blk.completion_nsec", "0"},
                                    {"null_blk.blocksize", "512"},
                                    {"null_blk.memory_backed", "0"},
                                    {"null_blk.queue_mode", "2"}},
                             1);
  ASSERT_TRUE(dev.ok()) << dev.status();
  EXPECT_EQ((*dev)->hw_queues(), 128u);
  EXPECT_EQ((*dev)->queue_depth(), 1'024u);
  auto* nb = dynamic_cast<NullBlkModel*>(dev->get());
  ASSERT_NE(nb, nullptr);
  EXPECT_EQ(nb->irqmode(), 0u);
  EXPECT_EQ(nb->completion_nsec(), 0u);
}

TEST(DeviceFactoryTest, HddAndFlashParams) {
  auto hdd = MakeDeviceModel(
      "hdd", Params{{"hdd.capacity", "2T"}, {"hdd.queue_depth", "256"}, {"hdd.write_cache", "0"}},
      1);
  ASSERT_TRUE(hdd.ok()) << hdd.status();
  EXPECT_EQ((*hdd)->queue_depth(), 256u);
  EXPECT_EQ(dynamic_cast<HddModel*>(hdd->get())->geometry().capacity_sectors(),
            (uint64_t{2} << 40) / 512);

  auto ssd = MakeDeviceModel(
      "ssd", Params{{"ssd.hw_queues", "16"}, {"ssd.read_us", "60.5"}, {"ssd.page_size", "16K"}}, 1);
  ASSERT_TRUE(ssd.ok()) << ssd.status();
  EXPECT_EQ((*ssd)->hw_queues(), 16u);
  auto optane = MakeDeviceModel("optane", Params{{"optane.hw_queues", "8"}}, 1);
  ASSERT_TRUE(optane.ok()) << optane.status();
  EXPECT_EQ((*optane)->hw_queues(), 8u);
}

TEST(DeviceFactoryTest, RejectsBadInput) {
  auto expect_invalid = [](const char* kind, const Params& params, const char* mentions) {
    auto dev = MakeDeviceModel(kind, params, 1);
    ASSERT_FALSE(dev.ok()) << kind;
    EXPECT_EQ(dev.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(std::string(dev.status().message()).find(mentions), std::string::npos)
        << dev.status();
  };
  expect_invalid("floppy", {}, "floppy");
  expect_invalid("null_blk", {{"null_blk.nr_devices", "2"}}, "null_blk.nr_devices");
  expect_invalid("null_blk", {{"hdd.rpm", "5400"}}, "hdd.rpm");  // another family's key
  expect_invalid("null_blk", {{"submit_queues", "2"}}, "submit_queues");
  expect_invalid("null_blk", {{"null_blk.submit_queues", "lots"}}, "unsigned integer");
  expect_invalid("null_blk", {{"null_blk.irqmode", "3"}}, "irqmode");
  expect_invalid("null_blk", {{"null_blk.queue_mode", "1"}}, "queue_mode");
  expect_invalid("hdd", {{"hdd.capacity", "12X"}}, "hdd.capacity");
  expect_invalid("hdd", {{"hdd.mean_seek_us", "30000"}}, "mean_seek_us");
  expect_invalid("hdd", {{"hdd.queue_depth", "0"}}, "queue_depth");
  expect_invalid("ssd", {{"ssd.hw_queues", "0"}}, "ssd.hw_queues");
  expect_invalid("optane", {{"optane.queue_depth", "0"}}, "optane.queue_depth");
  expect_invalid("optane", {{"ssd.dies", "4"}}, "ssd.dies");
}

}  // namespace
}  // namespace blkbench::engine

namespace blkbench::engine {
namespace {

// A mixed workload: 70% random 4k reads, 30% writes of 4k-64k, some sequential runs.
RequestGen MixedRequests(uint64_t seed) {
  auto rng = std::make_shared<SplitMix64>(seed);
  auto last_end = std::make_shared<uint64_t>(0);
  return [rng, last_end](uint64_t) {
    DeviceRequest rq;
    rq.write = rng->Below(10) < 3;
    rq.sectors = rq.write ? 8 * static_cast<uint32_t>(1 + rng->Below(16)) : 8;
    rq.sector = rng->Below(4) == 0 ? *last_end : rng->Below((uint64_t{1} << 28) - 4'096) * 8;
    *last_end = rq.sector + rq.sectors;
    return rq;
  };
}

TEST(DeviceFactoryTest, EveryKindIsDeterministicAndObeysLittlesLaw) {
  for (const char* kind : {"null_blk", "hdd", "hdd-seed003", "ssd", "ssd-sata", "ssd-seed004",
                           "optane", "optane-p5800x"}) {
    const uint32_t qd = 8;
    const uint64_t n = std::string(kind).starts_with("hdd") ? 2'000 : 20'000;
    auto a = MakeDeviceModel(kind, {}, 7);
    auto b = MakeDeviceModel(kind, {}, 7);
    ASSERT_TRUE(a.ok() && b.ok());
    const auto ra = RunClosedLoop(**a, qd, MixedRequests(5), n / 10, n);
    const auto rb = RunClosedLoop(**b, qd, MixedRequests(5), n / 10, n);
    EXPECT_EQ(ra.completion_order, rb.completion_order) << kind;
    EXPECT_EQ(ra.elapsed, rb.elapsed) << kind;
    EXPECT_NEAR(ra.iops * ra.mean_latency_ns * 1e-9, qd, 0.02 * qd) << "Little's law " << kind;
    EXPECT_EQ((*a)->in_flight(), qd) << kind;
  }
}

// The vocabulary the matrix parser validates against is what the factory builds: every
// sim: class, its rotational flag, and every parameter of its family bound to a field.
TEST(DeviceFactoryTest, VocabularyMatchesTheFactory) {
  for (const SimDeviceDef& d : SimDevices()) {
    const std::string kind(d.name);
    auto dev = MakeDeviceModel(kind, {}, 1);
    ASSERT_TRUE(dev.ok()) << kind << ": " << dev.status();
    EXPECT_EQ((*dev)->rotational(), d.rotational) << kind;
    const DeviceFamilyDef* family = FindDeviceFamily(d.family);
    ASSERT_NE(family, nullptr) << kind;
    for (const DeviceParamDef& p : family->params) {
      const std::string key = std::string(d.family) + "." + std::string(p.name);
      const char* value = p.type == ParamType::kBool        ? "true"
                          : p.type == ParamType::kQueueMode ? "2"
                                                            : "1";
      auto built = MakeDeviceModel(kind, Params{{key, value}}, 1);
      // A value the model's own Validate() refuses is fine; an unbound name is not.
      EXPECT_NE(built.status().code(), absl::StatusCode::kInternal) << built.status();
    }
  }
  EXPECT_FALSE(MakeDeviceModel("floppy", {}, 1).ok());
  EXPECT_EQ(FindSimDevice("sim:floppy"), nullptr);
}

}  // namespace
}  // namespace blkbench::engine
