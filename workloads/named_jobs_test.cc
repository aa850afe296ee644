// Tests for the matrix's jobs: section: named jobs inherit job: and the axes, override
// them with their own keys, place their threads in the layout's groups, and every mistake
// is reported at FILE:LINE:COL naming the job and the key.
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/cell_jobs.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "workloads/cell_bounds.h"
#include "workloads/format.h"
#include "workloads/matrix.h"

namespace blkbench::workloads {
namespace {

using ::testing::ElementsAre;

constexpr char kHead[] = "name: t\ntarget: {device_class: sim:ssd}\n";

std::vector<std::string> Errors(const std::string& body) {
  absl::StatusOr<Matrix> m = ParseMatrix(absl::StrCat(kHead, body), "m.yaml");
  EXPECT_FALSE(m.ok()) << "parsed:\n" << body;
  if (m.ok()) return {};
  return absl::StrSplit(std::string(m.status().message()), '\n');
}

Matrix Parse(const std::string& body) {
  absl::StatusOr<Matrix> m = ParseMatrix(absl::StrCat(kHead, body), "m.yaml");
  EXPECT_TRUE(m.ok()) << m.status();
  return m.ok() ? *std::move(m) : Matrix{};
}

TEST(NamedJobsTest, JobKeysAreTheGlobalSectionAndEachJobOverridesThem) {
  const Matrix m = Parse(
      "job: {direct: 1, ioengine: io_uring, runtime: 1s, time_based: 1, iodepth: 4}\n"
      "jobs:\n"
      "  reader: {rw: randread, bs: 4k, iodepth: 1}\n"
      "  writer: {rw: write, bs: 1M, direct: 0, numjobs: 2}\n");
  ASSERT_EQ(m.cells.size(), 1u);
  const v1::CellSpec& cell = m.cells[0];
  ASSERT_EQ(cell.jobs_size(), 2);
  const v1::NamedJob& reader = cell.jobs(0);
  const v1::NamedJob& writer = cell.jobs(1);
  EXPECT_EQ(reader.name(), "reader");
  EXPECT_EQ(reader.job().rw(), v1::RANDREAD);
  EXPECT_EQ(reader.job().iodepth(), 1u);
  EXPECT_TRUE(reader.job().direct());
  EXPECT_EQ(reader.job().ioengine(), v1::IO_URING);
  EXPECT_EQ(writer.name(), "writer");
  EXPECT_EQ(writer.job().rw(), v1::WRITE);
  EXPECT_EQ(writer.job().bs(), 1u << 20);
  EXPECT_FALSE(writer.job().direct());
  EXPECT_EQ(writer.job().iodepth(), 4u);  // from job:
  EXPECT_EQ(writer.job().numjobs(), 2u);
  EXPECT_EQ(writer.job().runtime_ns(), 1'000'000'000u);
  // fio's fixups with the job's own iodepth, not the global one.
  EXPECT_EQ(reader.job().iodepth_batch_complete_max(), 1u);
  // `job` repeats jobs[0] for readers of one job.
  EXPECT_EQ(cell.job().SerializeAsString(), reader.job().SerializeAsString());
  EXPECT_EQ(TotalNumjobs(cell), 3u);
  EXPECT_TRUE(CheckCellBounds(cell).ok()) << CheckCellBounds(cell);
}

TEST(NamedJobsTest, AnAxisVariesEveryJobThatDoesNotSetTheKey) {
  const Matrix m = Parse(
      "matrix: {iodepth: [1, 8], scheduler: [none, mq-deadline]}\n"
      "jobs:\n"
      "  a: {rw: randread}\n"
      "  b: {rw: write, iodepth: 16}\n");
  ASSERT_EQ(m.cells.size(), 4u);
  EXPECT_EQ(m.cells[2].jobs(0).job().iodepth(), 8u);
  EXPECT_EQ(m.cells[2].jobs(1).job().iodepth(), 16u);
  EXPECT_EQ(m.cells[0].jobs(0).job().iodepth(), 1u);
  EXPECT_EQ(m.cells[0].jobs(1).job().iodepth(), 16u);
  EXPECT_EQ(m.cells[1].queue().scheduler(), "mq-deadline");
}

TEST(NamedJobsTest, GroupsPlaceEachJobsThreadsWhateverTheOrder) {
  const Matrix m = Parse(
      "job: {cgroup: 'heavy:1000*2,light:100*1'}\n"
      "jobs:\n"
      "  reader: {rw: randread, group: light}\n"
      "  writer: {rw: write, numjobs: 2, group: heavy}\n");
  ASSERT_EQ(m.cells.size(), 1u);
  EXPECT_EQ(m.cells[0].jobs(0).group(), "light");
  // Threads in order reader, writer, writer; groups[0] is heavy.
  EXPECT_THAT(ThreadGroups(m.cells[0]), ElementsAre(1u, 0u, 0u));
}

TEST(NamedJobsTest, WithoutGroupsTheLayoutTakesThreadsInOrder) {
  const Matrix m = Parse(
      "job: {cgroup: per-job}\n"
      "jobs:\n"
      "  a: {numjobs: 2}\n"
      "  b: {}\n");
  ASSERT_EQ(m.cells.size(), 1u);
  EXPECT_EQ(m.cells[0].cgroup_layout().groups_size(), 3);
  EXPECT_THAT(ThreadGroups(m.cells[0]), ElementsAre(0u, 1u, 2u));
}

TEST(NamedJobsTest, MistakesNameTheJobAndTheKey) {
  EXPECT_THAT(
      Errors("jobs:\n"
             "  reader: {rw: randred, iodeth: 4}\n"
             "  writer: {scheduler: bfq, bs: [4k, 8k]}\n"),
      ElementsAre("m.yaml:4:16: job 'reader': key 'rw': expected one of read, write, "
                  "randread, randwrite, randrw, rw, readwrite, got 'randred'",
                  "m.yaml:4:25: job 'reader': unknown key 'iodeth' (did you mean "
                  "'iodepth'?)",
                  "m.yaml:5:12: job 'writer': key 'scheduler' is the cell's, not a job's; "
                  "put it under job: or matrix:",
                  "m.yaml:5:32: job 'writer': key 'bs': expected a size that is a "
                  "multiple of 512 (e.g. 4k), or one per direction as reads,writes[,trims] (e.g. "
                  "4k,64k; an empty one is 4k), got a list (axes go under matrix:)"));
}

TEST(NamedJobsTest, DuplicateJobNamesAreReported) {
  EXPECT_THAT(Errors("jobs:\n  a: {rw: read}\n  a: {rw: write}\n"),
              ElementsAre("m.yaml:5:3: key 'a' appears twice in jobs: (job names must be unique) "
                          "(first at line 4)"));
}

TEST(NamedJobsTest, AnAliasAndItsOptionInOneJob) {
  EXPECT_THAT(Errors("jobs:\n  a: {iodepth: 8, iodepth_batch_submit: 2, iodepth_batch: 4}\n"),
              ElementsAre("m.yaml:4:44: job 'a': key 'iodepth_batch' sets the same option as "
                          "'iodepth_batch_submit' (line 4); give only one of them"));
}

TEST(NamedJobsTest, CrossKeyProblemsPointAtTheJobsOwnKey) {
  EXPECT_THAT(
      Errors("job: {iodepth: 4}\njobs:\n  a: {rw: read}\n  b: {iodepth_batch_submit: 8}\n"),
      ElementsAre("m.yaml:6:29: job 'b': iodepth_batch_submit (8) is larger than iodepth (4)"));
}

TEST(NamedJobsTest, GroupMistakes) {
  EXPECT_THAT(Errors("job: {cgroup: 'heavy:1000*1,light:100*1'}\n"
                     "jobs:\n  a: {group: hevy}\n  b: {group: light}\n"),
              ElementsAre("m.yaml:5:14: job 'a': unknown group 'hevy' (the cgroup layout has "
                          "heavy, light)"));
  EXPECT_THAT(Errors("job: {cgroup: 'heavy:1000*1,light:100*1'}\n"
                     "jobs:\n  a: {group: heavy}\n  b: {rw: write}\n"),
              ElementsAre("m.yaml:6:3: job 'b': no group, but job 'a' names one; give every job "
                          "a group or none"));
  EXPECT_THAT(Errors("jobs:\n  a: {group: heavy}\n"),
              ElementsAre("m.yaml:4:14: job 'a': group 'heavy' needs a cgroup layout of named "
                          "groups (e.g. cgroup: 'heavy:100*1'), got cgroup ''"));
  EXPECT_THAT(Errors("job: {cgroup: 'heavy:1000*1,light:100*1'}\n"
                     "jobs:\n  a: {group: heavy}\n  b: {group: heavy}\n"),
              ElementsAre("m.yaml:3:15: key 'cgroup': group 'heavy' is for 1 jobs, but the named "
                          "jobs in it run 2 (their numjobs summed)",
                          "m.yaml:3:15: key 'cgroup': group 'light' is for 1 jobs, but the named "
                          "jobs in it run 0 (their numjobs summed)"));
  EXPECT_THAT(Errors("job: {cgroup: 'heavy:1000*1,light:100*1'}\n"
                     "jobs:\n  a: {numjobs: 2}\n  b: {}\n"),
              ElementsAre("m.yaml:3:15: key 'cgroup': expected groups whose jobs add up to "
                          "numjobs (3 over the named jobs), got 'heavy:1000*1,light:100*1' (2 "
                          "jobs)"));
}

TEST(NamedJobsTest, NamedJobsShareTheRunsClock) {
  EXPECT_THAT(Errors("job: {runtime: 1s, time_based: 1}\njobs:\n  a: {}\n  b: {runtime: 2s}\n"),
              ElementsAre("m.yaml:6:16: job 'b': runtime 2s differs from job 'a''s 1s; named "
                          "jobs share the run's runtime"));
  // Jobs may start at different times (separate fio invocations).
  const Matrix staggered = Parse("jobs:\n  a: {}\n  b: {startdelay: 200ms}\n");
  ASSERT_EQ(staggered.cells.size(), 1u);
  EXPECT_EQ(staggered.cells[0].jobs(1).job().startdelay_ns(), 200'000'000u);
  EXPECT_THAT(Errors("jobs:\n  a: {}\n  b: {thread: 1}\n"),
              ElementsAre("m.yaml:5:15: job 'b': thread 1 differs from job 'a''s 0; named jobs "
                          "share the run's thread"));
}

TEST(NamedJobsTest, TheTotalNumjobsRespectsTheLimit) {
  EXPECT_THAT(Errors("jobs:\n  a: {numjobs: 4000}\n  b: {numjobs: 100}\n"),
              ElementsAre("m.yaml:5:16: the named jobs run 4100 jobs in all (numjobs summed); "
                          "at most 4096"));
}

TEST(NamedJobsTest, TheAgentRechecksNamedJobs) {
  Matrix m = Parse("jobs:\n  a: {rw: read}\n  b: {rw: write}\n");
  ASSERT_EQ(m.cells.size(), 1u);
  v1::CellSpec cell = m.cells[0];
  cell.mutable_jobs(1)->mutable_job()->set_bs(1000);
  EXPECT_EQ(CheckCellBounds(cell).message(),
            "cell out of bounds: job 'b' bs 1000 (expected a multiple of 512)");
  cell = m.cells[0];
  cell.mutable_jobs(1)->mutable_job()->set_numjobs(4096);
  EXPECT_EQ(CheckCellBounds(cell).message(),
            "cell out of bounds: numjobs summed over the named jobs 4097 (expected 1 to 4096)");
}

}  // namespace
}  // namespace blkbench::workloads

namespace blkbench::workloads {
namespace {

TEST(NamedJobsTest, ValidatePrintsARowPerJob) {
  const Matrix m = Parse(
      "matrix: {scheduler: [none, bfq]}\n"
      "jobs:\n  reader: {rw: randread, iodepth: 2}\n  writer: {rw: write, bs: 1m, iodepth: 16}\n");
  const std::string table = FormatCells(m);
  EXPECT_THAT(table, ::testing::HasSubstr("0     reader  none       randread  4k  2        1       "
                                          " psync     0       -        sim:ssd       -\n"));
  EXPECT_THAT(
      table, ::testing::HasSubstr(
                 "      writer             write     1m  16       1        psync     0       -\n"));
}

}  // namespace
}  // namespace blkbench::workloads
