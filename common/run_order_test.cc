// RunOrder: repeat-major, every (cell, repeat) exactly once.
#include "common/run_order.h"

#include <set>
#include <utility>

#include "gtest/gtest.h"

namespace blkbench {
namespace {

TEST(RunOrderTest, RepeatMajorEveryCellOncePerRepeat) {
  const std::vector<RunSlot> order = RunOrder(3, 2);
  const std::vector<RunSlot> expected = {{0, 0}, {1, 0}, {2, 0}, {0, 1}, {1, 1}, {2, 1}};
  EXPECT_EQ(order, expected);
}

TEST(RunOrderTest, EachRunOnceAndACellsRepeatsSpreadOverTheExperiment) {
  const uint32_t cells = 5, repeats = 4;
  const std::vector<RunSlot> order = RunOrder(cells, repeats);
  ASSERT_EQ(order.size(), size_t{cells} * repeats);
  std::set<std::pair<uint32_t, uint32_t>> seen;
  for (const RunSlot& s : order) seen.emplace(s.cell_index, s.repeat);
  EXPECT_EQ(seen.size(), order.size());
  // Consecutive repeats of one cell are a whole pass over the cells apart.
  for (size_t i = cells; i < order.size(); ++i) {
    EXPECT_EQ(order[i].cell_index, order[i - cells].cell_index);
    EXPECT_EQ(order[i].repeat, order[i - cells].repeat + 1);
  }
}

TEST(RunOrderTest, EmptyWithoutCellsOrRepeats) {
  EXPECT_TRUE(RunOrder(0, 3).empty());
  EXPECT_TRUE(RunOrder(3, 0).empty());
}

}  // namespace
}  // namespace blkbench
