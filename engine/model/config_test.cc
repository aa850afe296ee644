// Tests for EngineConfig derivation: kernel strings, patches, CPU lists, job defaults and
// the errors for cells the engine cannot model.
#include "engine/model/config.h"

#include <algorithm>
#include <string>
#include <vector>

#include "common/sim_vocabulary.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace blkbench::engine {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(ParseKernelTest, DefaultsTo616) {
  absl::StatusOr<KernelSpec> k = ParseKernel("");
  ASSERT_TRUE(k.ok()) << k.status();
  EXPECT_EQ(k->major, 6);
  EXPECT_EQ(k->minor, 16);
  EXPECT_TRUE(k->patches.empty());
  EXPECT_FALSE(k->plug_batch_retry);
}

TEST(ParseKernelTest, VersionAndPatches) {
  absl::StatusOr<KernelSpec> k = ParseKernel("sim:5.18");
  ASSERT_TRUE(k.ok()) << k.status();
  EXPECT_EQ(k->major, 5);
  EXPECT_EQ(k->minor, 18);
  k = ParseKernel("sim:6.10+plug-batch-retry");
  ASSERT_TRUE(k.ok()) << k.status();
  EXPECT_EQ(k->minor, 10);
  EXPECT_THAT(k->patches, ElementsAre("plug-batch-retry"));
  EXPECT_TRUE(k->plug_batch_retry);
}

TEST(ParseKernelTest, BadInputs) {
  for (const char* bad :
       {"6.16", "sim:", "sim:6", "sim:6.x", "sim:-1.2", "sim:6.16.1", "linux:6.1"}) {
    absl::StatusOr<KernelSpec> k = ParseKernel(bad);
    EXPECT_EQ(k.status().code(), absl::StatusCode::kInvalidArgument) << bad;
  }
  absl::StatusOr<KernelSpec> k = ParseKernel("sim:6.10+plug-batch-retry+bogus");
  ASSERT_EQ(k.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(k.status().message(), HasSubstr("\"bogus\""));
  EXPECT_THAT(k.status().message(), HasSubstr("plug-batch-retry"));
  EXPECT_FALSE(ParseKernel("sim:6.10+").ok());
}

// The vocabulary the matrix parser checks kernels against is exactly what the model
// switches on: every core flag (one that names no scheduler) parses and sets one
// KernelSpec field, a scheduler's flag sets none (its factory reads `patches`;
// vocabulary_test.cc checks which), and no other flag exists.
TEST(ParseKernelTest, PatchFlagsAreTheVocabularys) {
  std::vector<std::string> names;
  for (const PatchFlagDef& f : PatchFlags()) names.emplace_back(f.name);
  EXPECT_EQ(KnownPatches(), names);
  const KernelSpec base;
  auto fields = [](const KernelSpec& k) {
    return std::vector<bool>{k.plug_batch_retry, k.split_whole_bio, k.wake_by_tags,
                             k.tag_no_preempt};
  };
  std::vector<bool> seen(fields(base).size(), false);
  for (const std::string& name : names) {
    absl::StatusOr<KernelSpec> k = ParseKernel("sim:6.16+" + name);
    ASSERT_TRUE(k.ok()) << k.status();
    EXPECT_EQ(k->patches, std::vector<std::string>{name});
    const std::vector<bool> set = fields(*k);
    const bool core = FindPatchFlag(name)->schedulers.empty();
    EXPECT_EQ(std::count(set.begin(), set.end(), true), core ? 1 : 0) << name;
    for (size_t i = 0; i < set.size(); ++i) seen[i] = seen[i] || set[i];
  }
  EXPECT_EQ(std::count(seen.begin(), seen.end(), false), 0) << "a KernelSpec flag has no name";
  EXPECT_EQ(ParseKernel("sim:6.16+wake-by-tags+wake-by-tags").status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(ParseCpuListTest, RangesAndErrors) {
  absl::StatusOr<std::vector<int>> c = ParseCpuList("0-3, 8,2", 16);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_THAT(*c, ElementsAre(0, 1, 2, 3, 8));
  EXPECT_FALSE(ParseCpuList("16", 16).ok());
  EXPECT_FALSE(ParseCpuList("3-1", 16).ok());
  EXPECT_FALSE(ParseCpuList("a", 16).ok());
  EXPECT_FALSE(ParseCpuList("", 16).ok());
}

v1::CellSpec NullBlkCell() {
  v1::CellSpec cell;
  cell.mutable_target()->set_device_class("sim:null_blk");
  cell.mutable_job()->set_rw(v1::RANDREAD);
  cell.mutable_job()->set_bs(4096);
  return cell;
}

TEST(DeriveConfigTest, Defaults) {
  v1::CellSpec cell = NullBlkCell();
  (*cell.mutable_device_params())["null_blk.irqmode"] = "0";
  absl::StatusOr<EngineConfig> c = DeriveConfig(cell);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->device_kind, "null_blk");
  EXPECT_EQ(c->device_params.at("null_blk.irqmode"), "0");
  EXPECT_EQ(c->machine, "desktop-16");
  EXPECT_EQ(c->kernel.minor, 16);
  EXPECT_EQ(c->queue.scheduler, "none");
  EXPECT_EQ(c->queue.max_sectors, 1024u);
  EXPECT_EQ(c->job.runtime_ns, kDefaultRuntimeNs);
  EXPECT_EQ(c->job.iodepth, 1u);
  EXPECT_EQ(c->job.numjobs, 1u);
  EXPECT_TRUE(c->job.random);
  EXPECT_EQ(c->job.read_percent, 100u);
}

TEST(DeriveConfigTest, JobAndQueueOptions) {
  v1::CellSpec cell = NullBlkCell();
  cell.mutable_target()->set_machine("small-vm");
  (*cell.mutable_device_params())["ssd.queue_depth"] = "7";  // another family: ignored
  cell.mutable_queue()->set_max_sectors_kb(128);
  cell.mutable_queue()->set_scheduler("none");
  v1::JobSpec& j = *cell.mutable_job();
  j.set_rw(v1::WRITE);
  j.set_ioengine(v1::IO_URING);  // unset is psync, fio's default (common/resolved_job.h)
  j.set_iodepth(32);
  j.set_iodepth_batch_submit(0);  // fio: 0 = iodepth
  j.set_iodepth_batch_complete_min(4);
  j.set_size(1 << 20);
  absl::StatusOr<EngineConfig> c = DeriveConfig(cell);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->machine, "small-vm");
  EXPECT_TRUE(c->device_params.empty());
  EXPECT_EQ(c->queue.max_sectors, 256u);
  EXPECT_FALSE(c->job.random);
  EXPECT_EQ(c->job.read_percent, 0u);
  EXPECT_EQ(c->job.batch_submit, 32u);
  EXPECT_EQ(c->job.complete_min, 4u);
  EXPECT_EQ(c->job.complete_max, 4u);         // fio: defaults to _min
  EXPECT_EQ(c->job.bytes_per_job, 1u << 20);  // not time_based: size bytes, no runtime
  EXPECT_EQ(c->job.runtime_ns, 0u);

  j.set_ioengine(v1::PSYNC);
  c = DeriveConfig(cell);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_TRUE(c->job.synchronous());
  EXPECT_EQ(c->job.iodepth, 1u);
  EXPECT_EQ(c->job.batch_submit, 1u);
}

TEST(DeriveConfigTest, Errors) {
  v1::CellSpec cell = NullBlkCell();
  cell.mutable_target()->set_device_class("null_blk");
  EXPECT_EQ(DeriveConfig(cell).status().code(), absl::StatusCode::kInvalidArgument);

  cell = NullBlkCell();
  cell.mutable_queue()->set_scheduler("cfq");
  absl::StatusOr<EngineConfig> c = DeriveConfig(cell);
  EXPECT_EQ(c.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(c.status().message(), HasSubstr("none, mq-deadline, bfq and kyber"));

  cell = NullBlkCell();
  cell.mutable_target()->set_kernel("sim:6.10+nope");
  EXPECT_EQ(DeriveConfig(cell).status().code(), absl::StatusCode::kInvalidArgument);

  cell = NullBlkCell();
  cell.mutable_job()->set_bs(1000);
  EXPECT_EQ(DeriveConfig(cell).status().code(), absl::StatusCode::kInvalidArgument);

  // The job rules the matrix parser and the executor apply (common/resolved_job.h): a
  // batch above iodepth and io_uring's ring limit are errors here too.
  cell = NullBlkCell();
  cell.mutable_job()->set_ioengine(v1::IO_URING);
  cell.mutable_job()->set_iodepth(32);
  cell.mutable_job()->set_iodepth_batch_submit(64);
  c = DeriveConfig(cell);
  EXPECT_EQ(c.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(c.status().message(), HasSubstr("iodepth_batch_submit (64) is larger than iodepth"));
  cell.mutable_job()->set_iodepth_batch_submit(0);
  cell.mutable_job()->set_iodepth(40000);
  c = DeriveConfig(cell);
  EXPECT_THAT(c.status().message(), HasSubstr("maximum ring size of 32768"));

  // No I/O, nothing to model: the rule validate applies (SimulatedJobProblem).
  cell = NullBlkCell();
  cell.mutable_job()->set_ioengine(v1::NOP);
  c = DeriveConfig(cell);
  EXPECT_EQ(c.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(c.status().message(), HasSubstr("ioengine nop issues no I/O"));

  cell = NullBlkCell();
  cell.mutable_target()->set_device_class("ssd");  // not simulated
  EXPECT_EQ(DeriveConfig(cell).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace blkbench::engine
