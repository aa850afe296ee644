// The engine with named jobs (CellSpec.jobs, issue 14): every job's tasks run at once in
// one run, each with its own options and cgroup group, and RunResult.jobs splits the
// total exactly.
#include <string>
#include <utility>

#include "common/histogram.h"
#include "engine/model/engine_test_util.h"
#include "gtest/gtest.h"

namespace blkbench::engine {
namespace {

using test::Cell;
using test::Ios;
using test::RunCell;

constexpr uint64_t kRuntimeNs = 200'000'000;  // 200 ms simulated

// Adds named job `name` to `cell`: `cell`'s job with rw, bs, iodepth and numjobs replaced.
v1::NamedJob& AddJob(v1::CellSpec& cell, const std::string& name, v1::RwMode rw, uint64_t bs,
                     uint32_t iodepth, uint32_t numjobs = 1) {
  v1::NamedJob& named = *cell.add_jobs();
  named.set_name(name);
  *named.mutable_job() = cell.job();
  named.mutable_job()->set_rw(rw);
  named.mutable_job()->set_bs(bs);
  named.mutable_job()->set_iodepth(iodepth);
  named.mutable_job()->set_numjobs(numjobs);
  return named;
}

uint64_t HistCount(const v1::Histogram& h) {
  absl::StatusOr<LatencyHistogram> l = LatencyHistogram::FromProto(h);
  EXPECT_TRUE(l.ok()) << l.status();
  return l.ok() ? l->count() : 0;
}

// Every counter and histogram of the jobs adds up to the run's.
void ExpectJobsSumToTotal(const v1::RunResult& r) {
  uint64_t read_ios = 0, write_ios = 0, read_bytes = 0, write_bytes = 0, lat = 0;
  double iops = 0;
  for (const v1::JobResult& j : r.jobs()) {
    read_ios += j.io().read_ios();
    write_ios += j.io().write_ios();
    read_bytes += j.io().read_bytes();
    write_bytes += j.io().write_bytes();
    lat += HistCount(j.lat());
    iops += j.iops();
  }
  EXPECT_EQ(read_ios, r.io().read_ios());
  EXPECT_EQ(write_ios, r.io().write_ios());
  EXPECT_EQ(read_bytes, r.io().read_bytes());
  EXPECT_EQ(write_bytes, r.io().write_bytes());
  EXPECT_EQ(lat, HistCount(r.lat()));
  EXPECT_NEAR(iops, r.iops(), 1e-6 * r.iops());
}

// A QD1 4k random reader beside a QD16 1M sequential writer on an SSD under mq-deadline:
// both run in one run, each reports its own I/O, and the reader's latency suffers
// against the reader alone.
TEST(EngineNamedJobsTest, ReaderBesideAWriterReportsEachAndTheTotal) {
  v1::CellSpec cell = Cell("ssd", v1::RANDREAD, 4096, 1, 1, kRuntimeNs);
  cell.mutable_queue()->set_scheduler("mq-deadline");
  v1::CellSpec alone = cell;
  AddJob(cell, "reader", v1::RANDREAD, 4096, 1);
  AddJob(cell, "writer", v1::WRITE, 1 << 20, 16);
  *cell.mutable_job() = cell.jobs(0).job();

  const v1::RunResult r = RunCell(cell);
  ASSERT_EQ(r.jobs_size(), 2);
  const v1::JobResult& reader = r.jobs(0);
  const v1::JobResult& writer = r.jobs(1);
  EXPECT_EQ(reader.name(), "reader");
  EXPECT_EQ(writer.name(), "writer");
  EXPECT_GT(reader.io().read_ios(), 100u);
  EXPECT_EQ(reader.io().write_ios(), 0u);
  EXPECT_GT(writer.io().write_ios(), 100u);
  EXPECT_EQ(writer.io().read_ios(), 0u);
  EXPECT_EQ(writer.io().write_bytes(), writer.io().write_ios() << 20);
  ExpectJobsSumToTotal(r);
  EXPECT_EQ(HistCount(reader.read_lat()), reader.io().read_ios());
  EXPECT_EQ(HistCount(writer.write_lat()), writer.io().write_ios());

  // The reader alone: a one-job cell reports only the total, and its reads are faster.
  const v1::RunResult solo = RunCell(alone);
  EXPECT_EQ(solo.jobs_size(), 0);
  EXPECT_GT(reader.lat_summary().p50_ns(), solo.lat_summary().p50_ns());
  EXPECT_LT(reader.iops(), solo.iops());

  // Deterministic, job by job.
  const v1::RunResult again = RunCell(cell);
  EXPECT_EQ(again.jobs(0).io().read_ios(), reader.io().read_ios());
  EXPECT_EQ(again.jobs(1).io().write_ios(), writer.io().write_ios());
}

// bfq between cgroups, the groups named by the jobs: `light` is written first but its
// group comes second in the layout, so order alone would swap them. Weights 1000:100
// give the heavy job about ten times the light one's I/O (the split of
// SchedTest.BfqGroupWeightsShareTheDevice).
TEST(EngineNamedJobsTest, BfqWeightsApplyToEachJobsGroup) {
  v1::CellSpec cell = Cell("ssd", v1::RANDREAD, 4096, 16, 1, 300'000'000);
  cell.mutable_queue()->set_scheduler("bfq");
  AddJob(cell, "light", v1::RANDREAD, 4096, 16).set_group("light");
  AddJob(cell, "heavy", v1::RANDREAD, 4096, 16).set_group("heavy");
  *cell.mutable_job() = cell.jobs(0).job();
  v1::CgroupLayout& layout = *cell.mutable_cgroup_layout();
  layout.set_kind(v1::CgroupLayout::GROUPS);
  for (const auto& [name, weight] :
       {std::pair<const char*, uint32_t>{"heavy", 1000}, {"light", 100}}) {
    v1::CgroupGroup& g = *layout.add_groups();
    g.set_name(name);
    g.set_weight(weight);
    g.set_jobs(1);
  }
  const v1::RunResult r = RunCell(cell);
  ASSERT_EQ(r.jobs_size(), 2);
  ExpectJobsSumToTotal(r);
  const double light = static_cast<double>(Ios(r) - r.jobs(1).io().read_ios());
  const double heavy = static_cast<double>(r.jobs(1).io().read_ios());
  ASSERT_GT(light, 0);
  EXPECT_NEAR(heavy / light, 10.0, 3.0);
  // The engine's per-group counts agree: group 1 (heavy) is the heavy job's.
  EXPECT_EQ(test::In(r, "cgroup.1.ios"), heavy);
  EXPECT_EQ(test::In(r, "cgroup.2.ios"), light);
}

// A job with numjobs 3 beside one with 1: four tasks, the jobs' shares counted per job.
TEST(EngineNamedJobsTest, NumjobsPerJob) {
  v1::CellSpec cell = Cell("null_blk", v1::RANDREAD, 4096, 4, 1, 20'000'000);
  AddJob(cell, "many", v1::RANDREAD, 4096, 4, 3);
  AddJob(cell, "one", v1::RANDREAD, 4096, 4, 1);
  *cell.mutable_job() = cell.jobs(0).job();
  const v1::RunResult r = RunCell(cell);
  ASSERT_EQ(r.jobs_size(), 2);
  ExpectJobsSumToTotal(r);
  // Same options per task on a device that is not the bottleneck: about 3:1.
  const double ratio = static_cast<double>(r.jobs(0).io().read_ios()) /
                       static_cast<double>(r.jobs(1).io().read_ios());
  EXPECT_NEAR(ratio, 3.0, 0.6);
}

}  // namespace
}  // namespace blkbench::engine
