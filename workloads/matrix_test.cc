// Tests for matrix parsing and expansion on valid files: defaults, aliases, axes
// from every section, cartesian order, and reading from disk.
#include "workloads/matrix.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "workloads/format.h"
#include "workloads/job_options.h"

namespace blkbench::workloads {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr uint64_t kSec = 1'000'000'000;

// The quickstart shape from the matrix file documentation.
constexpr char kQuickstart[] = R"(name: quickstart
repeats: 2
job: {rw: randread, bs: 4k, iodepth: 32, numjobs: 1, direct: 1, ioengine: io_uring, runtime: 2s, time_based: 1}
matrix:
  scheduler: [none, mq-deadline]
  bs: [4k, 64k]
target: {device_class: loop, kernel: "6.*"}
device: {null_blk: {submit_queues: 128, hw_queue_depth: 1024, completion_nsec: 0, irqmode: 0}}
)";

Matrix MustParse(const std::string& text) {
  absl::StatusOr<Matrix> m = ParseMatrix(text, "test.yaml");
  EXPECT_TRUE(m.ok()) << m.status();
  return m.ok() ? *std::move(m) : Matrix{};
}

std::vector<std::string> Labels(const Matrix& m) {
  std::vector<std::string> labels;
  for (const v1::CellSpec& cell : m.cells) labels.push_back(CellLabel(cell));
  return labels;
}

TEST(ParseMatrixTest, QuickstartIsRejectedBecauseBsIsInJobAndMatrix) {
  // The shape above sets bs in both job: and matrix:, which is ambiguous.
  absl::StatusOr<Matrix> m = ParseMatrix(kQuickstart, "quickstart.yaml");
  ASSERT_FALSE(m.ok());
  EXPECT_THAT(m.status().message(), HasSubstr("quickstart.yaml:6:3: key 'bs' is given in both"));
}

std::string QuickstartWithoutJobBs() {
  std::string text = kQuickstart;
  text.replace(text.find(" bs: 4k,"), 8, "");
  return text;
}

TEST(ParseMatrixTest, QuickstartExpandsToFourCells) {
  const Matrix m = MustParse(QuickstartWithoutJobBs());
  EXPECT_EQ(m.name, "quickstart");
  EXPECT_EQ(m.file_name, "test.yaml");
  EXPECT_EQ(m.repeats, 2u);
  EXPECT_THAT(m.axes, ElementsAre("scheduler", "bs"));
  ASSERT_EQ(m.cells.size(), 4u);
  EXPECT_THAT(Labels(m),
              ElementsAre("scheduler=none bs=4k", "scheduler=none bs=64k",
                          "scheduler=mq-deadline bs=4k", "scheduler=mq-deadline bs=64k"));
  for (uint32_t i = 0; i < 4; ++i) EXPECT_EQ(m.cells[i].index(), i);

  const v1::CellSpec& last = m.cells[3];
  EXPECT_EQ(last.queue().scheduler(), "mq-deadline");
  EXPECT_EQ(last.job().bs(), 65536u);
  EXPECT_EQ(last.job().rw(), v1::RANDREAD);
  EXPECT_EQ(last.job().iodepth(), 32u);
  EXPECT_EQ(last.job().numjobs(), 1u);
  EXPECT_TRUE(last.job().direct());
  EXPECT_EQ(last.job().ioengine(), v1::IO_URING);
  EXPECT_EQ(last.job().runtime_ns(), 2 * kSec);
  EXPECT_TRUE(last.job().time_based());
  EXPECT_EQ(last.target().device_class(), "loop");
  EXPECT_EQ(last.target().kernel(), "6.*");
  EXPECT_EQ(last.device_params().at("null_blk.submit_queues"), "128");
  EXPECT_EQ(last.device_params().at("null_blk.hw_queue_depth"), "1024");
  EXPECT_EQ(last.device_params().at("null_blk.completion_nsec"), "0");
  EXPECT_EQ(last.device_params().at("null_blk.irqmode"), "0");
  EXPECT_EQ(m.cells[0].job().bs(), 4096u);
  EXPECT_EQ(m.cells[0].axes(1).key(), "bs");
  EXPECT_EQ(m.cells[0].axes(1).value(), "4k");
}

TEST(ParseMatrixTest, DefaultsFollowFio) {
  const Matrix m = MustParse("name: d\ntarget: {device_class: null_blk}\n");
  EXPECT_EQ(m.repeats, 1u);
  EXPECT_TRUE(m.axes.empty());
  ASSERT_EQ(m.cells.size(), 1u);
  const v1::CellSpec& cell = m.cells[0];
  EXPECT_EQ(CellLabel(cell), "(single cell)");
  const v1::JobSpec& job = cell.job();
  EXPECT_EQ(job.rw(), v1::READ);
  EXPECT_EQ(job.rwmixread(), 50u);
  EXPECT_EQ(job.bs(), 4096u);
  EXPECT_EQ(job.size(), 0u);
  EXPECT_EQ(job.iodepth(), 1u);
  EXPECT_EQ(job.numjobs(), 1u);
  EXPECT_EQ(job.iodepth_batch_submit(), 1u);
  EXPECT_EQ(job.iodepth_batch_complete_min(), 1u);
  EXPECT_EQ(job.iodepth_batch_complete_max(), 1u);  // fio: defaults to _min
  EXPECT_FALSE(job.direct());
  EXPECT_EQ(job.runtime_ns(), 0u);
  EXPECT_FALSE(job.time_based());
  EXPECT_EQ(job.ioengine(), v1::PSYNC);
  EXPECT_FALSE(job.thread());
  EXPECT_EQ(job.cpus_allowed(), "");
  EXPECT_EQ(job.randseed(), 0x89u);
  EXPECT_EQ(cell.queue().scheduler(), "");
  EXPECT_EQ(cell.cgroup(), "");
  EXPECT_EQ(cell.target().kernel(), "");
  EXPECT_TRUE(cell.device_params().empty());
}

TEST(ParseMatrixTest, DerivedDefaultsAndAliases) {
  const Matrix m = MustParse(R"(name: d
job:
  iodepth: 32
  iodepth_batch: 0              # fio: 0 means iodepth
  iodepth_batch_complete: 8     # alias of iodepth_batch_complete_min
  rwmixwrite: 30
  rw: randrw
  randseed: 0x1234
  cpus_allowed: 0-3,6
  cgroup: per-job
  nr_requests: 256
  max_sectors_kb: 128
  ramp_time: 500ms
  io_size: 1g
  offset_increment: 100m
target: {device_class: sim:null_blk, kernel: "sim:6.16+dd-batch-dispatch"}
)");
  ASSERT_EQ(m.cells.size(), 1u);
  const v1::JobSpec& job = m.cells[0].job();
  EXPECT_EQ(job.iodepth_batch_submit(), 32u);
  EXPECT_EQ(job.iodepth_batch_complete_min(), 8u);
  EXPECT_EQ(job.iodepth_batch_complete_max(), 8u);
  EXPECT_EQ(job.rwmixread(), 70u);
  EXPECT_EQ(job.rw(), v1::RANDRW);
  EXPECT_EQ(job.randseed(), 0x1234u);
  EXPECT_EQ(job.cpus_allowed(), "0-3,6");
  EXPECT_EQ(job.ramp_time_ns(), 500'000'000u);
  EXPECT_EQ(job.io_size(), uint64_t{1} << 30);
  EXPECT_EQ(job.offset_increment(), uint64_t{100} << 20);
  EXPECT_EQ(m.cells[0].cgroup(), "per-job");
  EXPECT_EQ(m.cells[0].cgroup_layout().groups_size(), 1);
  EXPECT_EQ(m.cells[0].queue().nr_requests(), 256u);
  EXPECT_EQ(m.cells[0].queue().max_sectors_kb(), 128u);
  EXPECT_EQ(m.cells[0].target().kernel(), "sim:6.16+dd-batch-dispatch");
}

TEST(ParseMatrixTest, CgroupLayoutsAreAxesWithGroupsFilled) {
  const Matrix m = MustParse(R"(name: cg
job: {numjobs: 2}
matrix:
  cgroup: [root, one, "one:500", per-job, "heavy:1000*1, light:100*1"]
target: {device_class: loop}
)");
  ASSERT_EQ(m.cells.size(), 5u);
  auto groups = [&](size_t i) {
    std::vector<std::string> out;
    for (const v1::CgroupGroup& g : m.cells[i].cgroup_layout().groups()) {
      out.push_back(absl::StrCat(g.name(), ":", g.weight(), "*", g.jobs()));
    }
    return out;
  };
  EXPECT_EQ(m.cells[0].cgroup(), "");
  EXPECT_EQ(m.cells[0].cgroup_layout().kind(), v1::CgroupLayout::ROOT);
  EXPECT_THAT(groups(0), ElementsAre());
  EXPECT_EQ(m.cells[1].cgroup(), "one");
  EXPECT_EQ(m.cells[1].cgroup_layout().kind(), v1::CgroupLayout::ONE);
  EXPECT_THAT(groups(1), ElementsAre("g0:100*2"));
  EXPECT_EQ(m.cells[2].cgroup(), "one:500");
  EXPECT_THAT(groups(2), ElementsAre("g0:500*2"));
  EXPECT_EQ(m.cells[3].cgroup_layout().kind(), v1::CgroupLayout::PER_JOB);
  EXPECT_THAT(groups(3), ElementsAre("j0:100*1", "j1:100*1"));
  EXPECT_EQ(m.cells[4].cgroup(), "heavy:1000*1, light:100*1");
  EXPECT_EQ(m.cells[4].cgroup_layout().kind(), v1::CgroupLayout::GROUPS);
  EXPECT_THAT(groups(4), ElementsAre("heavy:1000*1", "light:100*1"));
  EXPECT_EQ(CellLabel(m.cells[4]), "cgroup=heavy:1000*1, light:100*1");
}

TEST(ParseMatrixTest, OneAndPerJobFollowNumjobsAxis) {
  const Matrix m = MustParse(
      "name: cg\njob: {cgroup: per-job}\nmatrix: {numjobs: [1, 3]}\ntarget: {device_class: x}\n");
  ASSERT_EQ(m.cells.size(), 2u);
  EXPECT_EQ(m.cells[0].cgroup_layout().groups_size(), 1);
  ASSERT_EQ(m.cells[1].cgroup_layout().groups_size(), 3);
  EXPECT_EQ(m.cells[1].cgroup_layout().groups(2).name(), "j2");
}

TEST(ParseMatrixTest, ExplicitBatchCompleteMaxIsKept) {
  const Matrix m = MustParse(
      "name: d\njob: {iodepth: 64, iodepth_batch_complete_min: 4, iodepth_batch_complete_max: 16}\n"
      "target: {device_class: nvme}\n");
  EXPECT_EQ(m.cells[0].job().iodepth_batch_complete_min(), 4u);
  EXPECT_EQ(m.cells[0].job().iodepth_batch_complete_max(), 16u);
}

TEST(ParseMatrixTest, DesignSeedExample) {
  const Matrix m = MustParse(R"(name: dd-batch-dispatch            # seed 000
repeats: 5
job: {rw: randwrite, bs: 4k, iodepth: 32, numjobs: 16, iodepth_batch_submit: 8,
      iodepth_batch_complete: 8, direct: 1, ioengine: io_uring, runtime: 30s}
matrix:
  scheduler: [mq-deadline, bfq]
  kernel: ["sim:6.16", "sim:6.16+dd-batch-dispatch"]
target: {device_class: "sim:null_blk"}
device: {null_blk: {submit_queues: 128, hw_queue_depth: 1024, completion_nsec: 0, irqmode: 0}}
)");
  EXPECT_EQ(m.repeats, 5u);
  EXPECT_THAT(Labels(m), ElementsAre("scheduler=mq-deadline kernel=sim:6.16",
                                     "scheduler=mq-deadline kernel=sim:6.16+dd-batch-dispatch",
                                     "scheduler=bfq kernel=sim:6.16",
                                     "scheduler=bfq kernel=sim:6.16+dd-batch-dispatch"));
  EXPECT_EQ(m.cells[2].job().numjobs(), 16u);
  EXPECT_EQ(m.cells[2].job().iodepth_batch_submit(), 8u);
  EXPECT_EQ(m.cells[2].job().iodepth_batch_complete_max(), 8u);
}

TEST(ParseMatrixTest, AxesComeFromEverySectionInFileOrder) {
  const Matrix m = MustParse(R"(name: order
target:
  device_class: [nvme, hdd]
job:
  numjobs: [1, 4, 16]
  rw: randread
matrix:
  cgroup: root          # a scalar under matrix: is a one-value axis
  scheduler: [none, bfq]
device:
  null_blk: {completion_nsec: [0, 1000]}
)");
  EXPECT_THAT(m.axes, ElementsAre("device_class", "numjobs", "cgroup", "scheduler",
                                  "null_blk.completion_nsec"));
  ASSERT_EQ(m.cells.size(), 2u * 3 * 1 * 2 * 2);
  // First axis slowest, last fastest.
  EXPECT_EQ(CellLabel(m.cells[0]),
            "device_class=nvme numjobs=1 cgroup=root scheduler=none null_blk.completion_nsec=0");
  EXPECT_EQ(CellLabel(m.cells[1]),
            "device_class=nvme numjobs=1 cgroup=root scheduler=none null_blk.completion_nsec=1000");
  EXPECT_EQ(CellLabel(m.cells[2]),
            "device_class=nvme numjobs=1 cgroup=root scheduler=bfq null_blk.completion_nsec=0");
  EXPECT_EQ(CellLabel(m.cells[4]),
            "device_class=nvme numjobs=4 cgroup=root scheduler=none null_blk.completion_nsec=0");
  EXPECT_EQ(CellLabel(m.cells[23]),
            "device_class=hdd numjobs=16 cgroup=root scheduler=bfq null_blk.completion_nsec=1000");
  EXPECT_EQ(m.cells[23].target().device_class(), "hdd");
  EXPECT_EQ(m.cells[23].job().numjobs(), 16u);
  EXPECT_EQ(m.cells[23].device_params().at("null_blk.completion_nsec"), "1000");
  for (uint32_t i = 0; i < m.cells.size(); ++i) {
    EXPECT_EQ(m.cells[i].index(), i);
    EXPECT_EQ(m.cells[i].job().rw(), v1::RANDREAD);
  }
}

TEST(ParseMatrixTest, NullBlkValuesAreNormalized) {
  const Matrix m = MustParse(
      "name: n\ntarget: {device_class: null_blk}\n"
      "device: {null_blk: {memory_backed: true, blocksize: 4k, queue_mode: 2}}\n");
  EXPECT_EQ(m.cells[0].device_params().at("null_blk.memory_backed"), "1");
  EXPECT_EQ(m.cells[0].device_params().at("null_blk.blocksize"), "4096");
  EXPECT_EQ(m.cells[0].device_params().at("null_blk.queue_mode"), "2");
}

// Seed 000's device, every attribute the agent writes for it.
TEST(ParseMatrixTest, Seed000NullBlkDeviceParses) {
  const Matrix m = MustParse(
      "name: n\ntarget: {device_class: null_blk}\n"
      "device: {null_blk: {completion_nsec: 0, blocksize: 512, home_node: 0, irqmode: 0,\n"
      "  submit_queues: 128, hw_queue_depth: 1024, size: 1024, memory_backed: 0,\n"
      "  queue_mode: 2}}\n");
  EXPECT_EQ(m.cells[0].device_params().size(), 9u);
  EXPECT_EQ(m.cells[0].device_params().at("null_blk.size"), "1024");
  EXPECT_EQ(m.cells[0].device_params().at("null_blk.home_node"), "0");
  for (const char* bad : {"size: 0", "home_node: 1024", "size: big"}) {
    absl::StatusOr<Matrix> refused =
        ParseMatrix(absl::StrCat("name: n\ntarget: {device_class: null_blk}\ndevice: {null_blk: {",
                                 bad, "}}\n"),
                    "test.yaml");
    EXPECT_FALSE(refused.ok()) << bad;
  }
}

TEST(ParseMatrixTest, TraceIsOffByDefaultAndMayBeAnAxis) {
  EXPECT_EQ(MustParse("name: n\ntarget: {device_class: loop}\n").cells[0].trace(), 0u);
  const Matrix m = MustParse("name: n\ntarget: {device_class: loop}\nmatrix:\n  trace: [0, 1]\n");
  ASSERT_EQ(m.cells.size(), 2u);
  EXPECT_EQ(m.cells[0].trace(), 0u);
  EXPECT_EQ(m.cells[1].trace(), 1u);
  EXPECT_EQ(MustParse("name: n\ntarget: {device_class: loop}\njob: {trace: 1}\n").cells[0].trace(),
            1u);
  absl::StatusOr<Matrix> bad =
      ParseMatrix("name: n\ntarget: {device_class: loop}\njob: {trace: 3}\n", "test.yaml");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(),
              HasSubstr("key 'trace': expected 0 (off) or 1 (block-layer trace summary), got '3'"));
}

TEST(ParseMatrixTest, TenThousandCellsIsTheLimit) {
  std::string a, b;
  for (int i = 1; i <= 100; ++i) {
    absl::StrAppend(&a, i == 1 ? "" : ", ", i);
    absl::StrAppend(&b, i == 1 ? "" : ", ", i * 8);
  }
  const Matrix m =
      MustParse(absl::StrCat("name: big\ntarget: {device_class: x}\nmatrix:\n", "  nr_requests: [",
                             a, "]\n  max_sectors_kb: [", b, "]\n"));
  ASSERT_EQ(m.cells.size(), 10000u);
  EXPECT_EQ(m.cells[9999].index(), 9999u);
  EXPECT_EQ(m.cells[9999].queue().nr_requests(), 100u);
  EXPECT_EQ(m.cells[9999].queue().max_sectors_kb(), 800u);
}

TEST(ParseMatrixFileTest, ReadsFromDisk) {
  const std::string path =
      (std::filesystem::path(::testing::TempDir()) / "matrix_test_quickstart.yaml").string();
  {
    std::ofstream out(path);
    out << QuickstartWithoutJobBs();
  }
  absl::StatusOr<Matrix> m = ParseMatrixFile(path);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->file_name, path);
  EXPECT_EQ(m->cells.size(), 4u);
  std::remove(path.c_str());
}

TEST(ParseMatrixFileTest, MissingFileIsNotFoundAndNamesThePath) {
  absl::StatusOr<Matrix> m = ParseMatrixFile("/nonexistent/dir/m.yaml");
  ASSERT_EQ(m.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(m.status().message(), HasSubstr("/nonexistent/dir/m.yaml"));
}

TEST(ParseMatrixFileTest, ErrorsNameTheFile) {
  const std::string path =
      (std::filesystem::path(::testing::TempDir()) / "matrix_test_bad.yaml").string();
  {
    std::ofstream out(path);
    out << "name: x\ntarget: {device_class: x}\njob: {bs: 4000}\n";
  }
  absl::StatusOr<Matrix> m = ParseMatrixFile(path);
  EXPECT_THAT(m.status().message(), HasSubstr(absl::StrCat(path, ":3:11: key 'bs'")));
  std::remove(path.c_str());
}

}  // namespace
}  // namespace blkbench::workloads

namespace blkbench::workloads {
namespace {

TEST(MatrixModelParamsTest, EngineDeviceParamsReachEveryCell) {
  auto m = ParseMatrix(
      "name: m\nmatrix: {iodepth: [1, 2]}\ntarget: {device_class: 'sim:ssd'}\n"
      "device: {ssd: {queue_depth: 1023, read_us: 80}}\n",
      "m.yaml");
  ASSERT_TRUE(m.ok()) << m.status();
  ASSERT_EQ(m->cells.size(), 2u);
  for (const auto& cell : m->cells) {
    EXPECT_EQ(cell.device_params().at("ssd.queue_depth"), "1023");
    EXPECT_EQ(cell.device_params().at("ssd.read_us"), "80");
  }
}

TEST(MatrixModelParamsTest, EngineHostSettings) {
  auto m = ParseMatrix(
      "name: m\ntarget: {device_class: 'sim:hdd'}\ndevice: {engine: {can_queue: 256, "
      "rq_affinity: 2}}\n",
      "m.yaml");
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->cells[0].device_params().at("engine.can_queue"), "256");
  EXPECT_EQ(m->cells[0].device_params().at("engine.rq_affinity"), "2");
  auto bad = ParseMatrix(
      "name: m\ntarget: {device_class: 'sim:hdd'}\ndevice: {engine: {rq_affinity: 3}}\n", "m.yaml");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(std::string(bad.status().message()),
              ::testing::HasSubstr("m.yaml:3:19: key 'engine.rq_affinity': expected an integer "
                                   "from 0 to 2"));
}

TEST(MatrixModelParamsTest, BadEngineDeviceParamNamesItsLine) {
  auto m = ParseMatrix(
      "name: m\ntarget: {device_class: 'sim:hdd'}\ndevice:\n  hdd: {rpm: 7200, colour: red}\n",
      "m.yaml");
  ASSERT_FALSE(m.ok());
  EXPECT_THAT(std::string(m.status().message()), ::testing::HasSubstr("m.yaml:4:20"));
  EXPECT_THAT(std::string(m.status().message()), ::testing::HasSubstr("hdd.colour"));
}

}  // namespace
}  // namespace blkbench::workloads
