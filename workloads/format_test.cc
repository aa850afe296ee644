// Tests for cell labels and the `blkbench validate` table.
#include "workloads/format.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "workloads/matrix.h"

namespace blkbench::workloads {
namespace {

TEST(CellLabelTest, JoinsAxesInOrder) {
  v1::CellSpec cell;
  EXPECT_EQ(CellLabel(cell), "(single cell)");
  auto* a = cell.add_axes();
  a->set_key("scheduler");
  a->set_value("bfq");
  auto* b = cell.add_axes();
  b->set_key("bs");
  b->set_value("4k");
  EXPECT_EQ(CellLabel(cell), "scheduler=bfq bs=4k");
}

TEST(FormatCellsTest, OneRowPerCellWithAxisColumnsFirst) {
  absl::StatusOr<Matrix> m = ParseMatrix(R"(name: demo
description: two schedulers, two block sizes
repeats: 3
job: {rw: randread, iodepth: 32, direct: 1, ioengine: io_uring, runtime: 2s, time_based: 1}
matrix:
  scheduler: [none, mq-deadline]
  bs: [4k, 64k]
target: {device_class: null_blk, kernel: "6.*"}
)",
                                         "demo.yaml");
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(FormatCells(*m),
            "demo (demo.yaml): 4 cells x 3 repeats = 12 runs\n"
            "two schedulers, two block sizes\n"
            "cell  scheduler    bs   rw        iodepth  numjobs  ioengine  direct  runtime  "
            "device_class  kernel\n"
            "0     none         4k   randread  32       1        io_uring  1       2s       "
            "null_blk      6.*\n"
            "1     none         64k  randread  32       1        io_uring  1       2s       "
            "null_blk      6.*\n"
            "2     mq-deadline  4k   randread  32       1        io_uring  1       2s       "
            "null_blk      6.*\n"
            "3     mq-deadline  64k  randread  32       1        io_uring  1       2s       "
            "null_blk      6.*\n");
}

TEST(FormatCellsTest, SingleCellShowsDefaults) {
  absl::StatusOr<Matrix> m = ParseMatrix(
      "name: one\njob: {rw: randrw, rwmixread: 70}\ntarget: {device_class: hdd}\n", "one.yaml");
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(FormatCells(*m),
            "one (one.yaml): 1 cell x 1 repeat = 1 run\n"
            "cell  rw            bs  iodepth  numjobs  ioengine  direct  runtime  scheduler  "
            "device_class  kernel\n"
            "0     randrw 70/30  4k  1        1        psync     0       -        -          "
            "hdd           -\n");
}

}  // namespace
}  // namespace blkbench::workloads
