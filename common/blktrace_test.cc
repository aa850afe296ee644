// The blkparse line writer shared by the engine and the agent's tracefs reader.
#include "common/blktrace.h"

#include "gtest/gtest.h"

namespace blkbench {
namespace {

TEST(BlktraceTest, LineFormat) {
  BlktraceEvent e;
  e.cpu = 3;
  e.seq = 12;
  e.time_ns = 123'456;
  e.pid = 1234;
  e.rwbs = "R";
  e.sector = 2048;
  e.sectors = 8;
  e.tail = "fio";
  EXPECT_EQ(BlktraceLine(e), "  8,0    3       12     0.000123456  1234  D   R 2048 + 8 [fio]");
}

TEST(BlktraceTest, CompleteAndSplitLines) {
  BlktraceEvent c;
  c.major = 7;
  c.minor = 12;
  c.cpu = 0;
  c.seq = 1;
  c.time_ns = 2'000'000'001;
  c.pid = 0;
  c.action = 'C';
  c.rwbs = "WS";
  c.sector = 4096;
  c.sectors = 256;
  c.tail = "0";
  EXPECT_EQ(BlktraceLine(c), "  7,12   0        1     2.000000001     0  C  WS 4096 + 256 [0]");
  BlktraceEvent x = c;
  x.action = 'X';
  x.split_at = 4352;
  x.pid = 77;
  x.tail = "fio";
  EXPECT_EQ(BlktraceLine(x), "  7,12   0        1     2.000000001    77  X  WS 4096 / 4352 [fio]");
}

TEST(BlktraceTest, ActionsOfTracepoints) {
  EXPECT_EQ(BlktraceAction("block_bio_queue"), 'Q');
  EXPECT_EQ(BlktraceAction("block_getrq"), 'G');
  EXPECT_EQ(BlktraceAction("block_rq_insert"), 'I');
  EXPECT_EQ(BlktraceAction("block_rq_issue"), 'D');
  EXPECT_EQ(BlktraceAction("block_rq_complete"), 'C');
  EXPECT_EQ(BlktraceAction("block_bio_backmerge"), 'M');
  EXPECT_EQ(BlktraceAction("block_bio_frontmerge"), 'F');
  EXPECT_EQ(BlktraceAction("block_split"), 'X');
  EXPECT_EQ(BlktraceAction("block_rq_requeue"), 'R');
  EXPECT_EQ(BlktraceAction("block_rq_merge"), 0);
  EXPECT_EQ(BlktraceAction("block_plug"), 0);
}

}  // namespace
}  // namespace blkbench
