// The order of an experiment's runs: which cell and repeat each run is, in the order runs
// are numbered (the store's ids) and executed (placement in id order, `blkbench sim`).
#ifndef BLKBENCH_COMMON_RUN_ORDER_H_
#define BLKBENCH_COMMON_RUN_ORDER_H_

#include <cstdint>
#include <vector>

namespace blkbench {

// One run of an experiment: repeat `repeat` of cell `cell_index`.
struct RunSlot {
  uint32_t cell_index = 0;
  uint32_t repeat = 0;
  friend bool operator==(const RunSlot& a, const RunSlot& b) {
    return a.cell_index == b.cell_index && a.repeat == b.repeat;
  }
};

// The runs of `cells` cells x `repeats` repeats, repeat-major: repeat 0 of every cell in
// index order, then repeat 1 of every cell, ... Runs taken in this order spread each
// cell's repeats over the experiment's duration, so a slow drift of the machine does not
// masquerade as a difference between cells. Empty when either count is 0.
std::vector<RunSlot> RunOrder(uint32_t cells, uint32_t repeats);

}  // namespace blkbench

#endif  // BLKBENCH_COMMON_RUN_ORDER_H_
